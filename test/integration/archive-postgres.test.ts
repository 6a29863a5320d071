import type { ChildProcess } from 'node:child_process';
import type { Replay } from '../../src/delivery/replay';
import { archiveDay, archivePartitions, partitionName } from '../../src/store/message-archive-table';
import { createTestDatabase } from '../helpers/postgres';
import { postgresStoreDatabase } from '../helpers/postgres-store-database';
import { waitFor } from '../helpers/processes';
import { closeSystemWithWorker, startSystemWithWorker } from '../helpers/system-with-worker';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { ADMIN_TOKEN, basicAuth, sourceWithDestination, type TestSystem } from '../helpers/system';

/**
 * The archive on the PostgreSQL store: the archive is partitioned by day; retention drops whole
 * partitions; a replay reads it like SQLite's. An API (in process) and a worker process of this
 * file's own, on their own database and task queue.
 */
const MESSAGES = 50;
const DAY_MS = 86_400_000;
const queue = `archive-postgres-${process.pid}`;
const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
const EVERYTHING = { since: '1970-01-01T00:00:00.000Z', until: '2100-01-01T00:00:00.000Z' };

let databaseUrl: string;
let system: TestSystem;
let worker: ChildProcess | undefined;
const receivers: Receiver[] = [];
const database = () => postgresStoreDatabase(databaseUrl);

beforeAll(async () => {
  databaseUrl = await createTestDatabase('switchyard_archive');
  ({ system, worker } = await startSystemWithWorker(queue, { overrides: { databaseUrl }, workerEnv: { DATABASE_URL: databaseUrl }, logName: 'archive-postgres-worker.log' }));
}, 240_000);
afterAll(() => closeSystemWithWorker(system, worker, receivers));

it('replays 50 archived messages to a destination made after them, each once with its messageId and the replay header; an erased user skipped', async () => {
  const live = await startReceiver();
  const target = await startReceiver();
  receivers.push(live, target);
  const since = new Date(Date.now() - 1_000).toISOString();
  const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: live.url, headers: {} }] });
  const ids = Array.from({ length: MESSAGES }, (_, i) => `pg-${i}`);
  const batch = ids.map((messageId, i) => ({ type: 'track', messageId, userId: `pg-u-${i % 5}`, event: 'Bought' }));
  expect((await system.app.inject({ method: 'POST', url: '/v1/batch', headers: { authorization: basicAuth(writeKey) }, payload: { batch } })).statusCode).toBe(200);
  await live.waitForRequests(MESSAGES, 60_000);
  expect((await system.app.inject({ method: 'POST', url: '/admin/regulations', headers: auth, payload: { regulationType: 'DELETE', subjectType: 'USER_ID', subjectIds: ['pg-u-0'] } })).statusCode).toBe(201);

  const destination = await system.store.destinations.create(source.id, { enabled: true, webhooks: [{ url: target.url, headers: {} }] });
  const liveBefore = MESSAGES;
  const started = await system.app.inject({ method: 'POST', url: '/admin/replays', headers: auth, payload: { sourceId: source.id, destinationId: destination.id, since, until: new Date(Date.now() + 1_000).toISOString() } });
  expect(started.statusCode).toBe(202);
  const { id } = started.json<{ id: string }>();
  const done = await waitFor(async () => {
    const replay = (await system.app.inject({ method: 'GET', url: `/admin/replays/${id}`, headers: auth })).json<Replay>();
    if (replay.status === 'running') throw new Error(JSON.stringify(replay));
    return replay;
  }, 90_000);
  const kept = ids.filter((_, i) => i % 5 !== 0);
  expect(done).toMatchObject({ status: 'completed', matched: MESSAGES, started: kept.length, delivered: kept.length, skipped: { erased: MESSAGES - kept.length, suppressed: 0, filtered: 0 } });
  expect(target.requests.map((r) => (JSON.parse(r.body) as { messageId: string }).messageId).sort()).toEqual([...kept].sort());
  expect(target.requests.every((r) => r.headers['x-switchyard-replay'] === id)).toBe(true);
  // The live destination gets nothing from the replay (the regulation's delete notification aside).
  expect(live.requests.filter((r) => (JSON.parse(r.body) as { type: string }).type !== 'delete')).toHaveLength(liveBefore);
  expect(live.requests.some((r) => r.headers['x-switchyard-replay'] !== undefined)).toBe(false);
}, 180_000);

it('a replay to a destination switched off ends failed, sending nothing', async () => {
  const target = await startReceiver();
  receivers.push(target);
  const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: target.url, headers: {} }], enabled: false });
  const since = new Date(Date.now() - 1_000).toISOString();
  expect((await system.app.inject({ method: 'POST', url: '/v1/track', headers: { authorization: basicAuth(writeKey) }, payload: { userId: 'off-u', event: 'A', messageId: 'off-0' } })).statusCode).toBe(200);
  const [destination] = await system.store.destinations.listBySource(source.id);
  const started = await system.app.inject({ method: 'POST', url: '/admin/replays', headers: auth, payload: { sourceId: source.id, destinationId: destination.id, since, until: new Date(Date.now() + 1_000).toISOString() } });
  const { id } = started.json<{ id: string }>();
  const done = await waitFor(async () => {
    const replay = (await system.app.inject({ method: 'GET', url: `/admin/replays/${id}`, headers: auth })).json<Replay>();
    if (replay.status === 'running') throw new Error(JSON.stringify(replay));
    return replay;
  }, 60_000);
  expect(done).toMatchObject({ status: 'failed', started: 0 });
  expect(done.finishedAt).not.toBeNull();
  expect(target.requests).toHaveLength(0);
}, 120_000);

it('retention drops whole day partitions past ARCHIVE_RETENTION and keeps the rest', async () => {
  const db = database();
  const store = await db.open();
  try {
    const { source } = await store.sources.create('archive retention');
    const now = Date.now();
    const at = (daysAgo: number) => new Date(now - daysAgo * DAY_MS).toISOString();
    const message = (messageId: string, receivedAt: string) => ({ sourceId: source.id, messageId, type: 'track' as const, receivedAt, call: { type: 'track' as const, message: { type: 'track' as const, messageId } } });
    // add() makes a day's partition when none is there yet (a write just after midnight).
    await store.archive.add([message('old', at(3)), message('yesterday', at(1)), message('today', at(0))]);
    const raw = db.raw();
    const before = (await archivePartitions(raw)).map((p) => p.name);
    expect(before).toEqual(expect.arrayContaining([partitionName(archiveDay(now - 3 * DAY_MS)), partitionName(archiveDay(now - DAY_MS)), partitionName(archiveDay(now))]));

    // Retention of one day (well short): the partition three days back goes whole.
    const { droppedPartitions, deleted } = await store.archive.prune(now, DAY_MS);
    expect(deleted).toBe(0);
    expect(droppedPartitions).toContain(partitionName(archiveDay(now - 3 * DAY_MS)));
    expect(droppedPartitions).not.toContain(partitionName(archiveDay(now - DAY_MS)));
    const after = (await archivePartitions(raw)).map((p) => p.name);
    expect(after).not.toContain(partitionName(archiveDay(now - 3 * DAY_MS)));
    expect(after).toContain(partitionName(archiveDay(now)));
    expect((await store.archive.page(source.id, EVERYTHING, 10)).messages.map((m) => m.messageId).sort()).toEqual(['today', 'yesterday']);

    // prepare() makes the coming days' partitions ahead of their messages.
    await store.archive.prepare(now);
    expect((await archivePartitions(raw)).map((p) => p.name)).toContain(partitionName(archiveDay(now + 2 * DAY_MS)));
  } finally {
    await store.close();
    await db.close();
  }
}, 60_000);
