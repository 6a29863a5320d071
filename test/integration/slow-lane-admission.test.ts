import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { Agent } from 'undici';
import { makeAttemptWebhook } from '../../src/activities/attempt-webhook';
import type { OpenAttemptRequest } from '../../src/activities/erased-users';
import { WebhookTraffic } from '../../src/activities/webhook-traffic';
import { slowLaneTaskQueue } from '../../src/delivery/slow-lane';
import type { AttemptResult } from '../../src/delivery/types';
import { openStore } from '../../src/store';
import type { Store } from '../../src/store/types';
import { startReceiver, type Receiver } from '../helpers/receiver';

/**
 * A rate-limited destination's send slot is taken right before sending, with the
 * webhook's room in hand. The attempt activity runs here as the worker runs it (in the SDK's
 * activity environment, on a task queue's name), against a real SQLite store and a real receiver,
 * with a cap of one attempt per webhook: attempts that wait for room in the slow lane must not have
 * claimed their slot before the wait, or two of them go out back to back when the room frees.
 */

const QUEUE = 'slow-lane-admission';
// Long enough that a stalled event loop on a loaded box (files run side by side) cannot let a whole
// interval pass between B's send and C's turn: at 250 ms a CI run saw C's slot come free and C sent.
const INTERVAL_MS = 1_000;
let dir: string;
let store: Store;
let receiver: Receiver;
const agent = new Agent();

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-admission-'));
  store = await openStore({ databasePath: path.join(dir, 'store.db') });
  // The first request holds the webhook's only room for three intervals; the others answer at once.
  receiver = await startReceiver((_request, n) => ({ status: 200, delayMs: n === 0 ? 3 * INTERVAL_MS : 0 }));
});
afterAll(async () => {
  await receiver.close();
  await agent.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

it('takes a slow-lane attempt\'s rate-limit slot only once it has the webhook\'s room: the second waiter is held, not sent beside the first', async () => {
  const { source } = await store.sources.create('admission');
  const destination = await store.destinations.create(source.id, { enabled: true, maxRequestsPerSecond: 1_000 / INTERVAL_MS, webhooks: [{ url: receiver.url, headers: {} }] });
  const attemptWebhook = makeAttemptWebhook(store, agent, new WebhookTraffic(1, 1_000));
  const request = (messageId: string): OpenAttemptRequest => ({
    destinationId: destination.id,
    webhookIndex: 0,
    round: 1,
    messageId,
    message: { type: 'track', messageId, event: 'Spaced' },
    timeoutMs: 5_000,
    flowControl: true,
    holdLeftMs: 60_000,
  });
  const run = (taskQueue: string, messageId: string) => new MockActivityEnvironment({ taskQueue }).run<[OpenAttemptRequest], AttemptResult, typeof attemptWebhook>(attemptWebhook, request(messageId));
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  // A takes the room and its slot; B and C find the room taken and wait for it in the slow lane,
  // each asking more than an interval after the one before (each would have had a slot of its own).
  const a = run(QUEUE, 'a');
  await receiver.waitForRequests(1);
  await sleep(INTERVAL_MS + 50);
  const b = run(slowLaneTaskQueue(QUEUE), 'b');
  await sleep(INTERVAL_MS + 50);
  const c = run(slowLaneTaskQueue(QUEUE), 'c');

  expect(await a).toMatchObject({ outcome: { kind: 'success' } });
  // The room frees at once after B's instant answer: C, first in line, now has it, but B's slot
  // was just taken, so C is held for the rest of the interval instead of sending beside B.
  expect(await b).toMatchObject({ outcome: { kind: 'success' } });
  const held = await c;
  expect(held.outcome).toBeUndefined();
  expect(held.held).toMatchObject({ reason: 'throttled' });
  expect(held.held!.waitMs).toBeGreaterThan(0);
  expect(held.held!.waitMs).toBeLessThanOrEqual(INTERVAL_MS);
  expect(receiver.requests.map((r) => JSON.parse(r.body).messageId)).toEqual(['a', 'b']);
}, 30_000);
