import { ApplicationFailure } from '@temporalio/common';
import { NativeConnection, Worker } from '@temporalio/worker';
import { buildApp } from '../../src/api/app';
import { NO_COUNTS, replayWorkflowId, type ReplayStatus } from '../../src/delivery/replay';
import { switchyardDataConverter } from '../../src/temporal/data-converter';
import { deliveriesOptions, temporalDeliveries } from '../../src/temporal/temporal-deliveries';
import { temporalReplays } from '../../src/temporal/replays';
import { bundleWorkflows } from '../../src/temporal/workflow-bundle';
import type { replayArchive } from '../../src/workflows/replay-archive';
import { ADMIN_TOKEN, sourceWithDestination, startSystem, type TestSystem } from '../helpers/system';

/**
 * A replay's pause, resume and cancel never hang an API request, and one status
 * write that failed does not fail every later one. The real replayArchive workflow on the run's
 * Temporal dev server: on a task queue no worker polls, and on one whose worker's store writes fail once.
 */
const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
const EVERYTHING = { since: '1970-01-01T00:00:00.000Z', until: '2100-01-01T00:00:00.000Z' };

let system: TestSystem;
beforeAll(async () => {
  system = await startSystem();
}, 120_000);
afterAll(() => system?.close());

it('answers 503 naming the replay when its workflow does not answer a pause within the deadline (no worker)', async () => {
  const queue = `no-worker-${process.pid}`;
  const app = await buildApp({ config: system.config, store: system.store, deliveries: temporalDeliveries(system.client, deliveriesOptions(system.config, system.keyring)), keyring: system.keyring, replays: temporalReplays(system.client, queue, 2_000) });
  let id: string | undefined;
  try {
    const { source, destination } = await sourceWithDestination(system.store, { webhooks: [{ url: 'https://receiver.example.com/hook', headers: {} }] });
    const started = await app.inject({ method: 'POST', url: '/admin/replays', headers: auth, payload: { sourceId: source.id, destinationId: destination.id, ...EVERYTHING } });
    expect(started.statusCode).toBe(202);
    id = started.json<{ id: string }>().id;
    const paused = await app.inject({ method: 'POST', url: `/admin/replays/${id}/pause`, headers: auth });
    expect(paused.statusCode).toBe(503);
    expect(paused.json()).toMatchObject({ code: 'replay_unanswered', message: expect.stringContaining(`id: replay ${id} did not answer the pause`) });
    expect(paused.headers['retry-after']).toBe('5');
  } finally {
    if (id) await system.client.workflow.getHandle(replayWorkflowId(id)).terminate('test over').catch(() => undefined);
    await app.close();
  }
}, 60_000);

it('runs the status writes after one that failed: the failed change answers its failure, the next ones are written', async () => {
  const taskQueue = `replay-status-${process.pid}`;
  const written: ReplayStatus[] = [];
  let failNext = true;
  const connection = await NativeConnection.connect({ address: system.config.temporalAddress });
  const worker = await Worker.create({
    connection,
    namespace: system.config.temporalNamespace,
    taskQueue,
    workflowBundle: await bundleWorkflows(),
    dataConverter: switchyardDataConverter(system.keyring),
    activities: {
      // One page, one message whose delivery never ends: the replay stays open for its changes.
      replayPage: async () => ({ counts: { ...NO_COUNTS, matched: 1, started: 1 }, inFlight: ['m1'] }),
      replayOutcomes: async () => [],
      saveReplayCounts: async () => undefined,
      // The replay's end raises background_task.finished; this worker sends none.
      raiseOperationalEvent: async () => undefined,
      setReplayStatus: async ({ status }: { status: ReplayStatus }) => {
        if (failNext) {
          failNext = false;
          // Out of retries at once (the store away for longer than the retry policy lasts).
          throw ApplicationFailure.nonRetryable('the store is away');
        }
        written.push(status);
      },
    },
  });
  const id = `status-writes-${Date.now()}`;
  await worker.runUntil(async () => {
    const handle = await system.client.workflow.start<typeof replayArchive>('replayArchive', {
      taskQueue,
      workflowId: replayWorkflowId(id),
      args: [{ replay: { id, sourceId: 'src_x', destinationId: 'dst_x', since: EVERYTHING.since, until: EVERYTHING.until, dryRun: false, maxInFlight: 5 } }],
    });
    await expect(handle.executeUpdate('pauseReplay')).rejects.toThrow();
    await expect(handle.executeUpdate('resumeReplay')).resolves.toBe('running');
    await expect(handle.executeUpdate('cancelReplay')).resolves.toBe('cancelled');
    await handle.result();
  });
  await connection.close();
  expect(written).toEqual(['running', 'cancelled', 'cancelled']);
}, 120_000);
