import type { ChildProcess } from 'node:child_process';
import { NO_COUNTS, type Replay } from '../../src/delivery/replay';
import { temporalReplays } from '../../src/temporal/replays';
import { ownWorkerStarts, stopProcess, waitFor } from '../helpers/processes';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { readReplay as readReplayVia, replayFinished, startReplay as startReplayVia } from '../helpers/replay-api';
import { ADMIN_TOKEN, basicAuth, sourceWithDestination, startSystem, type TestSystem } from '../helpers/system';

/**
 * The archive and replays on the SQLite store: every accepted message is archived, and a replay delivers the
 * archive of a range to one destination, made after the messages (a backfill), each message once
 * with its original messageId and the X-Switchyard-Replay header. This file runs its own worker
 * process on its own task queue, so one test can kill it mid-replay.
 *
 * Tests whose rule touches no user of the history (no regulation) share one source and its
 * history, each replaying it to a destination of its own made after the messages: a replay goes
 * to its one destination only, so they cannot see each other's. MESSAGES is four pages of
 * REPLAY_MAX_IN_FLIGHT: enough for a pause, a cancel or a kill to land mid-replay.
 */
const MESSAGES = 20;
const queue = `archive-replay-${process.pid}`;
// A live-lag limit set outright: no replay here rests 10 s to measure the unhurried lag (`auto`), which
// it did or not by where the clock stood. Pacing by live traffic is replay-live-first's rule.
const workerEnv = { TEMPORAL_TASK_QUEUE: queue, DELIVERY_TIMEOUT: '2s', DELIVERY_INITIAL_BACKOFF: '200ms', DELIVERY_MAX_BACKOFF: '1s', REPLAY_LIVE_LAG_LIMIT: '1m' };
const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };

let system: TestSystem;
let worker: ChildProcess | undefined;
const receivers: Receiver[] = [];

const startWorker = ownWorkerStarts('archive-replay', workerEnv, () => system.config);

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  receivers.push(r);
  return r;
}

beforeAll(async () => {
  // Five replayed deliveries at a time: a pause, a cancel or a kill lands while the replay is under way.
  system = await startSystem({ temporalTaskQueue: queue, replayMaxInFlight: 5 });
  worker = await startWorker();
}, 240_000);
afterAll(async () => {
  await stopProcess(worker);
  await Promise.all(receivers.map((r) => r.close()));
  await system.close();
});

const messageIds = (tag: string) => Array.from({ length: MESSAGES }, (_, i) => `${tag}-${i}`);

/**
 * A source whose one destination (`live`) receives MESSAGES track calls (event Odd or Even, users
 * u-0 … u-4), and the range they were received in.
 */
async function sourceWithHistory(tag: string) {
  const live = await receiver();
  const since = new Date(Date.now() - 1_000).toISOString();
  const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: live.url, headers: {} }] });
  const ids = messageIds(tag);
  const batch = ids.map((messageId, i) => ({ type: 'track', messageId, userId: `${tag}-u-${i % 5}`, event: i % 2 === 1 ? 'Odd' : 'Even', properties: { n: i } }));
  const response = await system.app.inject({ method: 'POST', url: '/v1/batch', headers: { authorization: basicAuth(writeKey) }, payload: { batch } });
  expect(response.statusCode).toBe(200);
  await live.waitForRequests(MESSAGES, 60_000);
  return { source, live, ids, since, until: new Date(Date.now() + 1_000).toISOString() };
}

let shared: ReturnType<typeof sourceWithHistory> | undefined;
/** The one history of the tests that apply no regulation to its users, sent by whichever runs first. */
const sharedHistory = () => (shared ??= sourceWithHistory('shared'));

/** A destination of the source made now (after the messages), with a receiver of its own. */
async function newDestination(sourceId: string, respond?: Parameters<Receiver['respond']>[0]) {
  const target = await receiver();
  if (respond) target.respond(respond);
  const destination = await system.store.destinations.create(sourceId, { enabled: true, webhooks: [{ url: target.url, headers: {} }] });
  return { destination, target };
}

const startReplay = (payload: Record<string, unknown>) => startReplayVia(system, payload);
const readReplay = (id: string) => readReplayVia(system, id);
const finished = (id: string, timeoutMs?: number) => replayFinished(system, id, timeoutMs);

const bodyOf = (request: { body: string }) => JSON.parse(request.body) as { messageId: string; event?: string; userId?: string };
const receivedIds = (r: Receiver) => r.requests.map((request) => bodyOf(request).messageId);

/** Each of `ids` received once, nothing else. */
function exactlyOnce(r: Receiver, ids: string[]) {
  expect([...receivedIds(r)].sort()).toEqual([...ids].sort());
}

/**
 * Resolves once Temporal lists the replay's `started` deliveries and none of them runs: whatever
 * they send has arrived by then (waited on, where a fixed sleep stood).
 */
async function replayDeliveriesEnded(id: string, started: number): Promise<void> {
  await waitFor(async () => {
    const [all, running] = await Promise.all([system.client.workflow.count(`WorkflowId STARTS_WITH "replay:${id}:"`), system.client.workflow.count(`WorkflowId STARTS_WITH "replay:${id}:" AND ExecutionStatus = "Running"`)]);
    if (all.count !== started || running.count > 0) throw new Error(`replay ${id}: ${all.count} of ${started} deliveries listed, ${running.count} running`);
  }, 60_000);
}

it('replays the archive to a destination made after the messages: each once, original messageId, replay header; no other destination gets anything new', async () => {
  const { source, live, ids, since, until } = await sharedHistory();
  const { destination, target } = await newDestination(source.id);
  expect(target.requests).toHaveLength(0);
  const liveBefore = live.requests.length;

  const id = await startReplay({ sourceId: source.id, destinationId: destination.id, since, until });
  const done = await finished(id);
  expect(done).toMatchObject({ id, sourceId: source.id, destinationId: destination.id, trigger: null, status: 'completed', matched: MESSAGES, started: MESSAGES, delivered: MESSAGES, failed: 0, skipped: { erased: 0, suppressed: 0, filtered: 0 } });
  expect(done.finishedAt).not.toBeNull();
  exactlyOnce(target, ids);
  for (const request of target.requests) expect(request.headers['x-switchyard-replay']).toBe(id);
  // The live destination had its messages and gets nothing from the replay.
  expect(live.requests).toHaveLength(liveBefore);
  expect(live.requests.every((request) => request.headers['x-switchyard-replay'] === undefined)).toBe(true);

  const listed = (await system.app.inject({ method: 'GET', url: '/admin/replays', headers: auth })).json<{ replays: Replay[] }>();
  expect(listed.replays.find((replay) => replay.id === id)).toEqual(done);
}, 180_000);

it('a dry run counts what would be sent and sends nothing', async () => {
  const { source, since, until } = await sharedHistory();
  const { destination, target } = await newDestination(source.id);
  const id = await startReplay({ sourceId: source.id, destinationId: destination.id, since, until, dryRun: true });
  expect(await finished(id)).toMatchObject({ status: 'completed', matched: MESSAGES, started: 0, delivered: 0, skipped: { erased: 0, suppressed: 0, filtered: 0 } });
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  expect(target.requests).toHaveLength(0);
}, 180_000);

it('a trigger narrows the replay to the messages it matches', async () => {
  const { source, ids, since, until } = await sharedHistory();
  const { destination, target } = await newDestination(source.id);
  const id = await startReplay({ sourceId: source.id, destinationId: destination.id, since, until, trigger: 'event = "Odd"' });
  expect(await finished(id)).toMatchObject({ status: 'completed', matched: MESSAGES / 2, started: MESSAGES / 2, delivered: MESSAGES / 2 });
  exactlyOnce(target, ids.filter((_, i) => i % 2 === 1));
}, 180_000);

it('refuses a trigger that is not FQL, naming the field', async () => {
  const { source, since, until } = await sharedHistory();
  const { destination } = await newDestination(source.id);
  const response = await system.app.inject({ method: 'POST', url: '/admin/replays', headers: auth, payload: { sourceId: source.id, destinationId: destination.id, since, until, trigger: 'event = = "x"' } });
  expect(response.statusCode).toBe(400);
  expect(response.json().message).toMatch(/^trigger: /);
}, 180_000);

it("applies the destination's filters as saved now: a filter added before the replay drops what it says", async () => {
  const { source, ids, since, until } = await sharedHistory();
  const { destination, target } = await newDestination(source.id);
  const filter = await system.app.inject({
    method: 'POST',
    url: `/admin/destinations/${destination.id}/filters`,
    headers: auth,
    payload: { title: 'no Even', enabled: true, if: 'event = "Even"', actions: [{ type: 'DROP' }] },
  });
  expect(filter.statusCode).toBe(201);
  const id = await startReplay({ sourceId: source.id, destinationId: destination.id, since, until });
  expect(await finished(id)).toMatchObject({ status: 'completed', matched: MESSAGES, started: MESSAGES / 2, delivered: MESSAGES / 2, skipped: { filtered: MESSAGES / 2 } });
  exactlyOnce(target, ids.filter((_, i) => i % 2 === 1));
}, 180_000);

it("skips an erased user's archived events, counts them, and sends nothing of theirs", async () => {
  const { source, ids, since, until } = await sourceWithHistory('erased');
  const erasedUser = 'erased-u-0';
  const regulation = await system.app.inject({ method: 'POST', url: '/admin/regulations', headers: auth, payload: { regulationType: 'DELETE', subjectType: 'USER_ID', subjectIds: [erasedUser] } });
  expect(regulation.statusCode).toBe(201);
  const { destination, target } = await newDestination(source.id);
  const id = await startReplay({ sourceId: source.id, destinationId: destination.id, since, until });
  const theirs = ids.filter((_, i) => i % 5 === 0);
  expect(await finished(id)).toMatchObject({ status: 'completed', matched: MESSAGES, started: MESSAGES - theirs.length, skipped: { erased: theirs.length, suppressed: 0, filtered: 0 } });
  exactlyOnce(target, ids.filter((_, i) => i % 5 !== 0));
  expect(target.requests.some((request) => bodyOf(request).userId === erasedUser)).toBe(false);
}, 180_000);

it("skips a suppressed user's archived events and counts them", async () => {
  const { source, ids, since, until } = await sourceWithHistory('suppressed');
  const regulation = await system.app.inject({ method: 'POST', url: '/admin/regulations', headers: auth, payload: { regulationType: 'SUPPRESS_ONLY', subjectType: 'USER_ID', subjectIds: ['suppressed-u-1'] } });
  expect(regulation.statusCode).toBe(201);
  const { destination, target } = await newDestination(source.id);
  const id = await startReplay({ sourceId: source.id, destinationId: destination.id, since, until });
  expect(await finished(id)).toMatchObject({ status: 'completed', matched: MESSAGES, skipped: { suppressed: MESSAGES / 5 } });
  exactlyOnce(target, ids.filter((_, i) => i % 5 !== 1));
}, 180_000);

it('pause holds the replay; resume finishes it, each message once', async () => {
  const { source, ids, since, until } = await sharedHistory();
  const { destination, target } = await newDestination(source.id, () => ({ status: 200, delayMs: 200 }));
  const id = await startReplay({ sourceId: source.id, destinationId: destination.id, since, until });
  await target.waitForRequests(5, 30_000);
  const paused = await system.app.inject({ method: 'POST', url: `/admin/replays/${id}/pause`, headers: auth });
  expect(paused.statusCode).toBe(200);
  expect(paused.json()).toMatchObject({ id, status: 'paused' });
  // What was under way when it paused ends; then nothing more is sent.
  const settled = await waitFor(async () => {
    const replay = await readReplay(id);
    if (replay.delivered + replay.failed < replay.started) throw new Error(`in flight: ${JSON.stringify(replay)}`);
    return replay;
  }, 30_000);
  expect(settled.status).toBe('paused');
  expect(settled.started).toBeLessThan(MESSAGES);
  const held = target.requests.length;
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  expect(target.requests).toHaveLength(held);
  expect((await readReplay(id)).status).toBe('paused');

  const resumed = await system.app.inject({ method: 'POST', url: `/admin/replays/${id}/resume`, headers: auth });
  expect(resumed.json()).toMatchObject({ status: 'running' });
  expect(await finished(id)).toMatchObject({ status: 'completed', matched: MESSAGES, started: MESSAGES, delivered: MESSAGES });
  exactlyOnce(target, ids);
  // The start and each change wrote one audit row naming the replay.
  const audit = await system.app.inject({ method: 'GET', url: `/admin/audit?target=${id}`, headers: auth });
  expect(audit.statusCode).toBe(200);
  expect((audit.json().entries as { action: string; outcome: string }[]).map((row) => `${row.action} ${row.outcome}`).sort()).toEqual(['replay.pause success', 'replay.resume success', 'replay.start success']);
}, 180_000);

it('starts the next page once half a page fits: one delivery that keeps failing does not stop the replay', async () => {
  const { source, ids, since, until } = await sharedHistory();
  // The first message the destination sees fails (500, retried) until it has seen more than a whole
  // page (REPLAY_MAX_IN_FLIGHT, 5) of others, or for 20 s: a replay that waits for its slowest
  // delivery before the next page sees only the 4 others of the first page by then.
  let held: { messageId: string; since: number } | undefined;
  const others = new Set<string>();
  let othersWhenAccepted: number | undefined;
  const { destination, target } = await newDestination(source.id, (request) => {
    const { messageId } = bodyOf(request);
    held ??= { messageId, since: Date.now() };
    if (messageId !== held.messageId) {
      others.add(messageId);
      return { status: 200 };
    }
    if (others.size <= 5 && Date.now() - held.since < 20_000) return { status: 500 };
    othersWhenAccepted ??= others.size;
    return { status: 200 };
  });
  const id = await startReplay({ sourceId: source.id, destinationId: destination.id, since, until });
  expect(await finished(id)).toMatchObject({ status: 'completed', matched: MESSAGES, started: MESSAGES, delivered: MESSAGES, failed: 0 });
  expect(othersWhenAccepted).toBeGreaterThan(5);
  // Every message delivered once: the held one's failed tries are its only repeats.
  const accepted = target.requests.map((request) => bodyOf(request).messageId).filter((messageId) => messageId !== held!.messageId);
  expect([...accepted, held!.messageId].sort()).toEqual([...ids].sort());
}, 180_000);

it('cancel stops the replay: nothing more is started', async () => {
  const { source, since, until } = await sharedHistory();
  const { destination, target } = await newDestination(source.id, () => ({ status: 200, delayMs: 300 }));
  const id = await startReplay({ sourceId: source.id, destinationId: destination.id, since, until });
  await target.waitForRequests(3, 30_000);
  const cancelled = await system.app.inject({ method: 'POST', url: `/admin/replays/${id}/cancel`, headers: auth });
  expect(cancelled.statusCode).toBe(200);
  expect(cancelled.json()).toMatchObject({ status: 'cancelled' });
  const done = await finished(id);
  expect(done.status).toBe('cancelled');
  expect(done.finishedAt).not.toBeNull();
  expect(done.started).toBeLessThan(MESSAGES);
  // The deliveries under way at the cancel end; nothing after them.
  await replayDeliveriesEnded(id, done.started);
  const after = target.requests.length;
  expect(after).toBeLessThanOrEqual(done.started);
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  expect(target.requests).toHaveLength(after);
  expect((await system.app.inject({ method: 'POST', url: `/admin/replays/${id}/resume`, headers: auth })).statusCode).toBe(409);
}, 180_000);

it('a destination deleted during a replay ends it failed, with the counts it had; nothing more is sent', async () => {
  const { source, since, until } = await sharedHistory();
  const { destination, target } = await newDestination(source.id, () => ({ status: 200, delayMs: 300 }));
  const id = await startReplay({ sourceId: source.id, destinationId: destination.id, since, until });
  await target.waitForRequests(3, 30_000);
  expect(await system.store.destinations.delete(destination.id)).toBe(true);
  const done = await finished(id);
  expect(done.status).toBe('failed');
  expect(done.finishedAt).not.toBeNull();
  expect(done.started).toBeGreaterThanOrEqual(3);
  expect(done.started).toBeLessThan(MESSAGES);
  // Ended: a pause is refused, and the deliveries started before the deletion send nothing more after it ends.
  expect((await system.app.inject({ method: 'POST', url: `/admin/replays/${id}/pause`, headers: auth })).statusCode).toBe(409);
  await replayDeliveriesEnded(id, done.started);
  const after = target.requests.length;
  expect(after).toBeLessThanOrEqual(done.started);
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  expect(target.requests).toHaveLength(after);
}, 180_000);

it('a worker killed mid-replay: the replay completes, each message still delivered exactly once', async () => {
  const { source, ids, since, until } = await sharedHistory();
  // Slow answers keep the replay's deliveries in flight: the kill lands while it is under way.
  const { destination, target } = await newDestination(source.id, () => ({ status: 200, delayMs: 300 }));
  const id = await startReplay({ sourceId: source.id, destinationId: destination.id, since, until });
  await target.waitForRequests(8, 30_000);
  await stopProcess(worker, 'SIGKILL');
  worker = await startWorker();
  expect(await finished(id, 120_000)).toMatchObject({ status: 'completed', matched: MESSAGES, started: MESSAGES, delivered: MESSAGES, failed: 0 });
  // A request cut off by the kill is sent again by its delivery's retry (at-least-once per
  // attempt), but never by a second delivery: every message arrived, and every id was started once.
  expect(new Set(receivedIds(target))).toEqual(new Set(ids));
  for (const messageId of ids) {
    let runs = 0;
    for await (const _ of system.client.workflow.list({ query: `WorkflowId = "replay:${id}:${messageId}"` })) runs++;
    expect(runs).toBe(1);
  }
}, 240_000);

it('continues as new while it pages, carrying its cursor and counts: each message still once', async () => {
  const { source, ids, since, until } = await sharedHistory();
  const { destination, target } = await newDestination(source.id);
  // Started as the API starts one, with a run of two steps: the replay continues as new many times.
  const id = `rpl_${'c'.repeat(16)}${process.pid.toString(16).padStart(16, '0')}`;
  await system.store.replays.create({ id, sourceId: source.id, destinationId: destination.id, since, until, trigger: null, dryRun: false, blockedOnly: false, status: 'running', ...NO_COUNTS, createdAt: new Date().toISOString(), finishedAt: null });
  await temporalReplays(system.client, queue).start({ id, sourceId: source.id, destinationId: destination.id, since, until, dryRun: false, maxInFlight: 5, stepsPerRun: 2 });
  expect(await finished(id)).toMatchObject({ status: 'completed', matched: MESSAGES, started: MESSAGES, delivered: MESSAGES, failed: 0 });
  exactlyOnce(target, ids);
  let runs = 0;
  for await (const _ of system.client.workflow.list({ query: `WorkflowId = "replay:${id}"` })) runs++;
  expect(runs).toBeGreaterThan(2);
}, 180_000);
