import type { ChildProcess } from 'node:child_process';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { replayFinished, startReplay } from '../helpers/replay-api';
import { basicAuth, sourceWithDestination, type TestSystem } from '../helpers/system';
import { closeSystemWithWorker, startSystemWithWorker } from '../helpers/system-with-worker';

/**
 * Issue 31, live traffic first: a replay is paced by the live lag of the worker that runs it
 * (delivery/replay-pace.ts). This worker's REPLAY_LIVE_LAG_LIMIT is 1 ms, so any live traffic is
 * "waiting too long": while live calls flow the replay goes at its floor, one delivery a second,
 * and once they stop it finishes every message, each once. (The `auto` limit, 25 % over the
 * unhurried lag, is measured by `npm run bench -- --replay`.)
 */
const ARCHIVED = 40;
const LIVE_SECONDS = 15;
const queue = `replay-live-first-${process.pid}`;

let system: TestSystem;
let worker: ChildProcess | undefined;
const receivers: Receiver[] = [];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  ({ system, worker } = await startSystemWithWorker(queue, { overrides: { replayMaxInFlight: 50 }, workerEnv: { REPLAY_LIVE_LAG_LIMIT: '1ms', DELIVERY_TIMEOUT: '2s' }, logName: 'replay-live-first-worker.log' }));
}, 240_000);
afterAll(() => closeSystemWithWorker(system, worker, receivers));

it('goes at its floor while live calls flow, then finishes each message once', async () => {
  const [live, backfill] = await Promise.all([startReceiver(), startReceiver()]);
  receivers.push(live, backfill);
  const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: live.url, headers: {} }] });
  const post = (batch: Array<Record<string, unknown>>) => system.app.inject({ method: 'POST', url: '/v1/batch', headers: { authorization: basicAuth(writeKey) }, payload: { batch } });
  const since = new Date(Date.now() - 1_000).toISOString();
  const archived = Array.from({ length: ARCHIVED }, (_, i) => `archived-${i}`);
  expect((await post(archived.map((messageId, i) => ({ type: 'track', messageId, userId: `u-${i % 4}`, event: 'Archived' })))).statusCode).toBe(200);
  await live.waitForRequests(ARCHIVED, 60_000);
  const until = new Date(Date.now() + 500).toISOString();
  await sleep(600);
  // The backfill destination is made now: it gets the replay, and the live calls from here on.
  const destination = await system.store.destinations.create(source.id, { enabled: true, webhooks: [{ url: backfill.url, headers: {} }] });

  // Live calls, ten a second, for the whole of LIVE_SECONDS.
  let flowing = true;
  let sent = 0;
  const liveCalls = (async () => {
    while (flowing) {
      const response = await post([{ type: 'track', messageId: `live-${sent}`, userId: 'live', event: 'Live' }]);
      expect(response.statusCode).toBe(200);
      sent++;
      await sleep(100);
    }
  })();
  // A closed window with live sends in it before the replay's first page.
  await sleep(6_000);
  const replayedAt = Date.now();
  const id = await startReplay(system, { sourceId: source.id, destinationId: destination.id, since, until });
  await sleep(LIVE_SECONDS * 1_000);
  flowing = false;
  await liveCalls;
  const liveEnded = Date.now();

  const replayed = () => backfill.requests.filter((request) => request.headers['x-switchyard-replay'] === id);
  const besideLive = replayed().filter((request) => request.at <= liveEnded);
  // At its floor (1/s, from the first page on): about LIVE_SECONDS of them, never the whole archive at once.
  expect(besideLive.length).toBeGreaterThan(0);
  expect(besideLive.length).toBeLessThanOrEqual(LIVE_SECONDS * 1.5);
  const gaps = besideLive.slice(1).map((request, i) => request.at - besideLive[i].at).sort((a, b) => a - b);
  expect(gaps[Math.floor(gaps.length / 2)]).toBeGreaterThanOrEqual(700);
  expect(besideLive[0].at - replayedAt).toBeLessThan(LIVE_SECONDS * 1_000);

  const done = await replayFinished(system, id, 120_000);
  expect(done).toMatchObject({ status: 'completed', matched: ARCHIVED, started: ARCHIVED, delivered: ARCHIVED, failed: 0 });
  const ids = replayed().map((request) => (JSON.parse(request.body) as { messageId: string }).messageId);
  expect(ids.sort()).toEqual([...archived].sort());
  // Live calls went to both destinations as ordinary deliveries, each once.
  await live.waitForRequests(ARCHIVED + sent, 60_000);
  expect(backfill.requests.filter((request) => request.headers['x-switchyard-replay'] === undefined)).toHaveLength(sent);
}, 240_000);
