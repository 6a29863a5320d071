import type { ChildProcess } from 'node:child_process';
import { LAG_WINDOW_MS, MIN_LIVE_SAMPLES } from '../../src/delivery/replay-pace';
import { waitFor } from '../helpers/processes';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { replayFinished, startReplay } from '../helpers/replay-api';
import { basicAuth, sourceWithDestination, type TestSystem } from '../helpers/system';
import { closeSystemWithWorker, startSystemWithWorker } from '../helpers/system-with-worker';

/**
 * Live traffic first: a replay is paced by the live lag of the worker that runs it
 * (delivery/replay-pace.ts). This worker's REPLAY_LIVE_LAG_LIMIT is 1 ms, so any live traffic is
 * "waiting too long": while live calls flow the replay goes at its floor, one delivery a second,
 * and once they stop it finishes every message, each once. (The `auto` limit, 25 % over the
 * unhurried lag, is measured by `npm run bench -- --replay`.) Live calls flow until BESIDE_LIVE
 * replayed deliveries have arrived beside them: waited on, not a fixed stretch.
 */
const ARCHIVED = 10;
const BESIDE_LIVE = 6;
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

  // Live calls, four a second (two destinations: eight first sends, some 40 a lag window), until the replay has gone beside them.
  let flowing = true;
  let sent = 0;
  const liveCalls = (async () => {
    while (flowing) {
      const response = await post([{ type: 'track', messageId: `live-${sent}`, userId: 'live', event: 'Live' }]);
      expect(response.statusCode).toBe(200);
      sent++;
      await sleep(250);
    }
  })();
  // A closed lag window with live sends in it before the replay's first page: the last whole
  // window (on the epoch, as activities/live-lag.ts cuts them) has twice MIN_LIVE_SAMPLES live
  // requests, by their arrival (each went out just before it arrived).
  const isLive = (request: { body: string }) => (JSON.parse(request.body) as { messageId: string }).messageId.startsWith('live-');
  await waitFor(() => {
    const now = Date.now();
    const closedAt = now - (now % LAG_WINDOW_MS);
    const inWindow = [...live.requests, ...backfill.requests].filter((request) => request.at >= closedAt - LAG_WINDOW_MS + 100 && request.at < closedAt && isLive(request)).length;
    if (inWindow < 2 * MIN_LIVE_SAMPLES) throw new Error(`${inWindow} live requests in the last closed lag window`);
  }, 60_000);
  const replayedAt = Date.now();
  const id = await startReplay(system, { sourceId: source.id, destinationId: destination.id, since, until });
  const replayed = () => backfill.requests.filter((request) => request.headers['x-switchyard-replay'] === id);
  await waitFor(() => {
    if (replayed().length < BESIDE_LIVE) throw new Error(`${replayed().length} of ${BESIDE_LIVE} replayed deliveries beside live calls`);
  }, 60_000);
  flowing = false;
  await liveCalls;
  const liveEnded = Date.now();

  const besideLive = replayed().filter((request) => request.at <= liveEnded);
  // The replay went while live calls flowed (from its first page on), at its floor (1/s): about a
  // second of live calls each, never the whole archive at once.
  expect(besideLive.length).toBeGreaterThanOrEqual(BESIDE_LIVE);
  expect(besideLive.length).toBeLessThanOrEqual(((liveEnded - replayedAt) / 1_000) * 1.5);
  const gaps = besideLive.slice(1).map((request, i) => request.at - besideLive[i].at).sort((a, b) => a - b);
  expect(gaps[Math.floor(gaps.length / 2)]).toBeGreaterThanOrEqual(700);

  const done = await replayFinished(system, id, 120_000);
  expect(done).toMatchObject({ status: 'completed', matched: ARCHIVED, started: ARCHIVED, delivered: ARCHIVED, failed: 0 });
  const ids = replayed().map((request) => (JSON.parse(request.body) as { messageId: string }).messageId);
  expect(ids.sort()).toEqual([...archived].sort());
  // Live calls went to both destinations as ordinary deliveries, each once.
  await live.waitForRequests(ARCHIVED + sent, 60_000);
  expect(backfill.requests.filter((request) => request.headers['x-switchyard-replay'] === undefined)).toHaveLength(sent);
}, 240_000);
