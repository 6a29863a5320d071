import type { ChildProcess } from 'node:child_process';
import { deliveryWorkflowId } from '../../src/delivery/ids';
import type { RedeliveryJobView } from '../../src/ports';
import { ownWorkerStarts, stopProcess, waitFor } from '../helpers/processes';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { ADMIN_TOKEN, deliveryResult, send, sourceWithDestination, startSystem, type TestSystem } from '../helpers/system';

/**
 * A bulk redelivery job is "resumable after a crash, no message twice". This test runs its
 * own worker process on its own task queue (the job and its redeliveries run there), kills it with
 * SIGKILL while the job is under way, starts another, and checks the job completes with every
 * message redelivered exactly once: one new run per message, whatever attempts the crash cut short.
 */
const MESSAGES = 30;
const queue = `bulk-redeliver-crash-${process.pid}`;
const workerEnv = { TEMPORAL_TASK_QUEUE: queue, DELIVERY_TIMEOUT: '2s', DELIVERY_INITIAL_BACKOFF: '200ms', DELIVERY_MAX_BACKOFF: '1s' };
const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };

let system: TestSystem;
let receiver: Receiver;
let worker: ChildProcess | undefined;

const startWorker = ownWorkerStarts('bulk-redeliver-crash', workerEnv, () => system.config);

beforeAll(async () => {
  system = await startSystem({ temporalTaskQueue: queue });
  receiver = await startReceiver(() => ({ status: 400 }));
  worker = await startWorker();
}, 240_000);
afterAll(async () => {
  await stopProcess(worker);
  await receiver.close();
  await system.close();
});

async function runsOf(sourceId: string, messageId: string): Promise<number> {
  let runs = 0;
  for await (const _ of system.client.workflow.list({ query: `WorkflowId = "${deliveryWorkflowId(sourceId, messageId)}"` })) runs++;
  return runs;
}

it('completes after its worker is killed mid-job, each failed message redelivered exactly once', async () => {
  const since = new Date(Date.now() - 1_000).toISOString();
  const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
  const ids = Array.from({ length: MESSAGES }, (_, i) => `crash-${i}`);
  for (const messageId of ids) await send(system.app, writeKey, 'track', { messageId, userId: 'u-crash', event: 'Refused' });
  for (const messageId of ids) expect(await deliveryResult(system.client, source.id, messageId)).toMatchObject({ ok: false });
  await waitFor(async () => {
    const page = (await system.app.inject({ method: 'GET', url: '/admin/deliveries', query: { sourceId: source.id, status: 'failed', limit: '500' }, headers: auth })).json<{ deliveries: unknown[] }>();
    if (page.deliveries.length !== MESSAGES) throw new Error(`${page.deliveries.length} of ${MESSAGES} listed failed`);
  }, 30_000);

  // Slow answers keep the job's redeliveries in flight: the kill lands while the job is under way.
  receiver.respond(() => ({ status: 200, delayMs: 1_500 }));
  const before = receiver.requests.length;
  const started = await system.app.inject({ method: 'POST', url: `/admin/sources/${source.id}/redeliver`, headers: auth, payload: { status: 'failed', since, until: new Date(Date.now() + 60_000).toISOString() } });
  expect(started.statusCode).toBe(202);
  const { id } = started.json<{ id: string }>();
  await waitFor(() => {
    if (receiver.requests.length === before) throw new Error('no redelivery yet');
  }, 30_000);
  await stopProcess(worker, 'SIGKILL');

  worker = await startWorker();
  const done = await waitFor(async () => {
    const view = (await system.app.inject({ method: 'GET', url: `/admin/redeliveries/${id}`, headers: auth })).json<RedeliveryJobView>();
    if (view.status === 'running') throw new Error(`job running: ${JSON.stringify(view)}`);
    return view;
  }, 60_000);
  expect(done).toMatchObject({ status: 'completed', matched: MESSAGES, started: MESSAGES, finished: MESSAGES, skipped: 0 });

  // Exactly one new run per message (the failed one and the job's), and each one delivered.
  for (const messageId of ids) expect(await deliveryResult(system.client, source.id, messageId)).toMatchObject({ ok: true });
  const runs = await waitFor(async () => {
    const counts = await Promise.all(ids.map((messageId) => runsOf(source.id, messageId)));
    if (!counts.every((n) => n === 2)) throw new Error(`runs per message: ${counts.join(',')}`);
    return counts;
  }, 15_000);
  expect(runs).toEqual(ids.map(() => 2));
  const received = new Set(receiver.requests.slice(before).map((request) => (JSON.parse(request.body) as { messageId: string }).messageId));
  expect([...received].sort()).toEqual([...ids].sort());
}, 180_000);
