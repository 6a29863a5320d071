import { WorkflowNotFoundError } from '@temporalio/client';
import { deliveryWorkflowId } from '../../src/delivery/ids';
import { faultDir, sleep, startOwnTemporal, stopProcess, type OwnTemporal } from '../helpers/faults';
import { postTrackBatch, sourceWithDestination, startSystem, type TestSystem } from '../helpers/system';

/**
 * The API against a Temporal server that has gone away: a 503 at the start deadline means the
 * messages were not accepted and nothing keeps starting them behind the sender's back, and the
 * API closes cleanly with starts still between their client retries.
 */

const START_TIMEOUT_MS = 1_000;
// Longer than the Temporal client's whole retry budget for one call (10 attempts, at most 5 s apart).
const CLIENT_RETRY_BUDGET_MS = 25_000;

let temporal: OwnTemporal;
let system: TestSystem | undefined;
let dir: string;

beforeAll(async () => {
  dir = faultDir('temporal-down');
  temporal = await startOwnTemporal(dir);
}, 300_000);

afterAll(async () => {
  await closeSystem();
  await stopProcess(temporal.process);
});

async function closeSystem(): Promise<void> {
  const open = system;
  system = undefined;
  await open?.close();
}

async function openSystem(): Promise<{ api: TestSystem; writeKey: string; sourceId: string }> {
  system = await startSystem({ temporalAddress: temporal.address, temporalTaskQueue: `temporal-down-${process.pid}`, ingestStartTimeout: START_TIMEOUT_MS, ingestRateLimit: 0 });
  const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: 'http://127.0.0.1:9/hook', headers: {} }] });
  return { api: system, writeKey, sourceId: source.id };
}

it('answers 503 at the start deadline and starts none of those messages once Temporal is back', async () => {
  const { api, writeKey, sourceId } = await openSystem();
  await stopProcess(temporal.process, 'SIGTERM', 30_000);

  const ids = Array.from({ length: 20 }, (_, i) => `down-${i}`);
  const res = await postTrackBatch(api.app, writeKey, ids);
  expect(res.statusCode).toBe(503);
  expect(res.json()).toMatchObject({ code: 'temporal_unavailable' });
  expect(res.headers['retry-after']).toBe('5');

  // Back on the same port and database while the client would still be retrying those starts.
  temporal = await startOwnTemporal(dir, temporal.port);
  await sleep(CLIENT_RETRY_BUDGET_MS);
  for (const id of ids) {
    await expect(api.client.workflow.getHandle(deliveryWorkflowId(sourceId, id)).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
  }
  // The sender's retry is what gets them in.
  const retry = await postTrackBatch(api.app, writeKey, ids);
  expect(retry.statusCode).toBe(200);
  await closeSystem();
}, 300_000);

it('closes cleanly while refused starts are between client retries (no retry fires on a closed connection)', async () => {
  const { api, writeKey } = await openSystem();
  await stopProcess(temporal.process, 'SIGTERM', 30_000);
  const health = await api.app.inject({ method: 'GET', url: '/health' });
  expect(health.statusCode).toBe(503);
  expect(health.json()).toMatchObject({ temporal: false });
  const res = await postTrackBatch(api.app, writeKey, ['closing-1', 'closing-2']);
  expect(res.statusCode).toBe(503);
  await closeSystem();
  // A retry timer left behind would now throw "Channel has been shut down" and fail this test.
  await sleep(6_000);
}, 300_000);
