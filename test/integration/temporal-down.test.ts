import { WorkflowNotFoundError } from '@temporalio/client';
import { deliveryWorkflowId } from '../../src/delivery/ids';
import { faultDir, sleep, startOwnTemporal, stopProcess, type OwnTemporal } from '../helpers/faults';
import { ADMIN_TOKEN, postTrackBatch, sourceWithDestination, startSystem, type TestSystem } from '../helpers/system';
import { waitFor } from '../helpers/processes';
import { startTcpRelay } from '../helpers/tcp-relay';

/**
 * The API against a Temporal server that has gone away: a 503 at the start deadline means the
 * messages were not accepted and nothing keeps starting them behind the sender's back, and the
 * API closes cleanly with starts still between their client retries.
 */

const START_TIMEOUT_MS = 1_000;
// The close-with-pending-retries cycle: repeated, as one run of a race proves little.
const CLOSE_CYCLES = 20;
// Short, so the 503 comes while the client is between its first retries (100 ms, 170 ms, 290 ms...).
const CYCLE_START_TIMEOUT_MS = 700;
// The health read's own deadline is 3 s; a close has nothing left to wait for beyond that.
const CLOSE_WITHIN_MS = 4_000;
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

async function openSystem(): Promise<{ api: TestSystem; writeKey: string; sourceId: string; destinationId: string }> {
  system = await startSystem({ temporalAddress: temporal.address, temporalTaskQueue: `temporal-down-${process.pid}`, ingestStartTimeout: START_TIMEOUT_MS, ingestRateLimit: 0 });
  const { source, writeKey, destination } = await sourceWithDestination(system.store, { webhooks: [{ url: 'http://127.0.0.1:9/hook', headers: {} }] });
  return { api: system, writeKey, sourceId: source.id, destinationId: destination.id };
}

it('answers 503 at the start deadline and starts none of those messages once Temporal is back; the overview counts them received once, with the request accepted', async () => {
  const { api, writeKey, sourceId, destinationId } = await openSystem();
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
  // The sender's retry is what gets them in. Retried as a sender would: under load the restarted
  // server can take longer than this test's 1 s start timeout, and that 503 is as truthful.
  const retry = await waitFor(async () => {
    const res = await postTrackBatch(api.app, writeKey, ids);
    if (res.statusCode !== 200) throw new Error(`retry answered ${res.statusCode}: ${res.body}`);
    return res;
  }, 120_000);
  expect(retry.statusCode).toBe(200);
  // `received` is recorded once Temporal holds the deliveries, so the tries answered 503
  // count nothing; two flush intervals after the count appears it is whole.
  const received = async () => (await api.app.inject({ method: 'GET', url: `/admin/destinations/${destinationId}/overview`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json<{ received: number }>().received;
  await waitFor(async () => {
    if ((await received()) === 0) throw new Error('no count flushed yet');
  }, 10_000);
  await sleep(1_000);
  expect(await received()).toBe(ids.length);
  await closeSystem();
}, 300_000);

it('closes cleanly, 20 times in a row, with refused starts and health reads between client retries (no retry fires on a closed connection)', async () => {
  // Temporal stays up behind a relay the test cuts: each cycle opens the API, cuts it off, has a
  // start answer 503 at its timeout while the client is still retrying it, and closes.
  const relay = await startTcpRelay(temporal.address);
  try {
    for (let cycle = 1; cycle <= CLOSE_CYCLES; cycle++) {
      relay.restore();
      system = await startSystem({ temporalAddress: relay.address, temporalTaskQueue: `temporal-down-${process.pid}`, ingestStartTimeout: CYCLE_START_TIMEOUT_MS, ingestRateLimit: 0 });
      const { writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: 'http://127.0.0.1:9/hook', headers: {} }] });
      relay.cut();
      // A status read checks two task queues; while one call fails the other may be between retries.
      const [health, status, res] = await Promise.all([
        system.app.inject({ method: 'GET', url: '/health' }),
        system.app.inject({ method: 'GET', url: '/admin/status', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }),
        postTrackBatch(system.app, writeKey, [`closing-${cycle}-1`, `closing-${cycle}-2`]),
      ]);
      expect(health.statusCode).toBe(503);
      expect(status.json()).toMatchObject({ status: 'unavailable', temporal: false });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ code: 'temporal_unavailable' });
      // Promptly: the drain waits for calls cancelled at the start timeout, not for their retries.
      const closing = Date.now();
      await closeSystem();
      expect(Date.now() - closing).toBeLessThan(CLOSE_WITHIN_MS);
    }
    // A retry timer left by any cycle would fire within one backoff (at most 5 s, plus jitter), throw
    // "Channel has been shut down" from a timer, and Jest fails the running test on it.
    await sleep(7_000);
  } finally {
    await relay.close();
  }
}, 300_000);
