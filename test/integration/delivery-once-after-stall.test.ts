/**
 * Exactly once without faults: a worker that stalls right after its first attempt was answered
 * (a long GC pause, a starved event loop, a VM paused by its host) must not send that message
 * again when it comes back. The stall outlasts both the attempt's own timeout and Temporal's
 * workflow task timeout, the two clocks that would otherwise call the answered attempt lost.
 */
import type { ChildProcess } from 'node:child_process';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { closeSystemWithWorker, startSystemWithWorker } from '../helpers/system-with-worker';
import { deliveryOutline } from '../helpers/delivery-outline';
import { deliveryResult, send, sourceWithDestination, type TestSystem } from '../helpers/system';

const QUEUE = `once-after-stall-${process.pid}`;
// Past the workflow task timeout (10 s) and the local attempt's start-to-close (2 s + 5 s grace).
const STALL_MS = 12_000;

let system: TestSystem;
let worker: ChildProcess;
let receiver: Receiver;

beforeAll(async () => {
  ({ system, worker } = await startSystemWithWorker(QUEUE, { logName: 'once-after-stall-worker.log' }));
  receiver = await startReceiver();
}, 60_000);

afterAll(async () => {
  if (worker.pid) process.kill(worker.pid, 'SIGCONT');
  await closeSystemWithWorker(system, worker, [receiver]);
});

/**
 * A worker sends a first attempt as a regular activity until it has seen the URL answer fast, and
 * as a local activity inside the workflow task after that: the stall hits a different clock in each.
 */
it.each([
  ['a regular activity, timed out by its start-to-close', false],
  ['a local activity, its workflow task timed out', true],
])('sends a message once when its worker stalls right after the receiver answered: %s', async (_path, warm) => {
  const { writeKey, source } = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
  receiver.respond(() => ({ status: 200 }));
  if (warm) {
    const warmUp = `warm-${Date.now()}`;
    await send(system.app, writeKey, 'track', { userId: 'u', event: 'Warm up', messageId: warmUp });
    expect(await deliveryResult(system.client, source.id, warmUp)).toMatchObject({ ok: true });
  }
  let stalled = false;
  receiver.respond(() => {
    // The answer is written at once; the worker reads it only after the stall.
    if (!stalled && worker.pid) {
      stalled = true;
      process.kill(worker.pid, 'SIGSTOP');
      setTimeout(() => process.kill(worker.pid!, 'SIGCONT'), STALL_MS);
    }
    return { status: 200 };
  });
  const messageId = `stall-${Date.now()}`;
  await send(system.app, writeKey, 'track', { userId: 'u', event: 'Stalled', messageId });

  const result = await deliveryResult(system.client, source.id, messageId);
  expect(result).toMatchObject({ ok: true });
  const sent = receiver.requests.filter((r) => r.body.includes(messageId)).length;
  // What Temporal did meanwhile: the stall outlasted a timeout, so the test is about something.
  const outline = await deliveryOutline(system.client, source.id, messageId);
  expect({ sent, outline }).toEqual({ sent: 1, outline: expect.stringContaining(warm ? 'WORKFLOW_TASK_TIMED_OUT' : 'ACTIVITY_TASK_TIMED_OUT') });
}, 90_000);
