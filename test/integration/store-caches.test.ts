import net from 'node:net';
import { sql } from 'kysely';
import pg from 'pg';
import { openStore, type Store } from '../../src/store';
import { identifierHash, parseKeyring } from '../../src/privacy/keyring';
import { erasedIdHashes } from '../../src/store/erasures';
import { cachedDestinationReads, cachedErasureReads, NotifiedCache } from '../../src/store/notified-cache';
import { cachedOperationalEndpointReads, operationalEndpointCopy } from '../../src/store/operational-endpoint-copy';
import { LISTENER_APPLICATION_NAME, listenForStoreChanges, type StoreListener } from '../../src/store/store-notifications';
import { connectPostgres, postgresPool } from '../../src/store/connection';
import type { Destination } from '../../src/store/types';
import { createTestDatabase } from '../helpers/postgres';

/**
 * The worker's destination and erasure caches on a real PostgreSQL: every kind of change the API
 * (another store handle) makes reaches the worker's copy through LISTEN/NOTIFY at once, with a TTL far too
 * long to hide a missed one; and a LISTEN connection the server drops makes the caches step aside
 * until it is back.
 */

const HOUR = 3_600_000;
let url: string;
let api: Store;
let workerStore: Store;
let cache: NotifiedCache<Destination | undefined>;
let erasureCache: NotifiedCache<string | undefined>;
let listener: StoreListener;
let worker: Store['destinations'];
let workerErasures: Store['erasures'];
let endpointCopy: ReturnType<typeof operationalEndpointCopy>;
let workerEndpoints: Store['operationalEndpoints'];
let db: ReturnType<typeof connectPostgres>;

beforeAll(async () => {
  url = await createTestDatabase('switchyard_cache');
  api = await openStore({ databasePath: '', databaseUrl: url });
  workerStore = await openStore({ databasePath: '', databaseUrl: url });
  cache = new NotifiedCache(HOUR);
  erasureCache = new NotifiedCache(HOUR);
  db = connectPostgres(postgresPool(url));
  endpointCopy = operationalEndpointCopy(HOUR);
  listener = await listenForStoreChanges(url, { destinations: cache, erasures: erasureCache, operationalEndpoints: endpointCopy }, { notify });
  workerEndpoints = cachedOperationalEndpointReads(workerStore.operationalEndpoints, endpointCopy);
  worker = cachedDestinationReads(workerStore.destinations, cache);
  workerErasures = cachedErasureReads(db, workerStore.erasures, erasureCache, erasedIdHashes(undefined));
});
afterAll(async () => {
  await listener?.close();
  await db?.destroy();
  await api?.close();
  await workerStore?.close();
});

/** A NOTIFY through the pool, as openStore wires the listener's probes. */
const notify = async (channel: string, payload: string) => void (await sql`select pg_notify(${channel}, ${payload})`.execute(db));

/** Polls until `check` holds; how long it took (ms). A notification arrives within milliseconds. */
async function within<T>(ms: number, read: () => Promise<T>, check: (value: T) => boolean): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (check(await read())) return Date.now() - started;
    if (Date.now() - started > ms) throw new Error(`not seen within ${ms} ms: ${JSON.stringify(await read())}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function cachedDestination() {
  const { source } = await api.sources.create('cache test');
  const destination = await api.destinations.create(source.id, { enabled: true, sharedSecret: 'one', webhooks: [{ url: 'https://hooks.example.com/a', headers: {} }, { url: 'https://hooks.example.com/b', headers: {} }] });
  // Served from the cache once the creation's own NOTIFY (which may arrive after the first read) is in.
  await within(2_000, async () => {
    const hits = cache.hits;
    await worker.get(destination.id);
    return cache.hits > hits;
  }, (hit) => hit);
  return { source, destination };
}

it('listens from the start', () => {
  expect(cache.isListening).toBe(true);
  expect(erasureCache.isListening).toBe(true);
});

it('an erasure made through another handle reaches the cached erasure checks at once', async () => {
  const user = `user-${Date.now()}`;
  expect(await workerErasures.erasedAt([user, 'someone else'])).toBeUndefined();
  const hits = erasureCache.hits;
  expect(await workerErasures.erasedAt([user])).toBeUndefined();
  expect(erasureCache.hits).toBe(hits + 1);
  await api.erasures.add([user], '2026-11-23T10:00:00.000Z');
  expect(await within(2_000, () => workerErasures.erasedAt([user, 'someone else']), (at) => at === '2026-11-23T10:00:00.000Z')).toBeLessThan(2_000);
  await api.erasures.add([user], '2026-11-23T11:00:00.000Z');
  await within(2_000, () => workerErasures.erasedAt([user]), (at) => at === '2026-11-23T11:00:00.000Z');
});

it("a user's data key destroyed or made anew through another handle reaches the worker's cached copy at once", async () => {
  // openStore's own wiring, as src/worker.ts opens it: keys, PostgreSQL, a cache TTL far too long to hide a missed change.
  const keyring = parseKeyring(`k1=${Buffer.alloc(32, 3).toString('base64')},k2=${Buffer.alloc(32, 4).toString('base64')}`, 'k1');
  const keyedApi = await openStore({ databasePath: '', databaseUrl: url, keyring });
  const keyedWorker = await openStore({ databasePath: '', databaseUrl: url, keyring, destinationCacheTtlMs: HOUR });
  const subject = identifierHash(keyring, 'userId', `cached-${Date.now()}`);
  const read = () => keyedWorker.dataKeys.get(subject);
  try {
    expect(await read()).toBeUndefined();
    const first = (await keyedApi.dataKeys.getOrCreate([subject])).get(subject)!;
    // A key made after the worker read "none" is seen at once (no cached "none" hides it).
    await within(2_000, read, (key) => key?.equals(first) === true);
    // Served from the worker's copy: a row removed behind the cache's back (notification off) is not noticed...
    await sql`alter table data_keys disable trigger data_keys_notify`.execute(db);
    await sql`delete from data_keys where subject_hash = ${subject}`.execute(db);
    await sql`alter table data_keys enable trigger data_keys_notify`.execute(db);
    expect((await read())?.equals(first)).toBe(true);
    // ...and a regulation's destroy, which notifies, is.
    await keyedApi.dataKeys.getOrCreate([subject]);
    await within(2_000, read, (key) => key !== undefined && !key.equals(first));
    await keyedApi.dataKeys.destroy([subject]);
    expect(await within(2_000, read, (key) => key === undefined)).toBeLessThan(2_000);
  } finally {
    await keyedApi.close();
    await keyedWorker.close();
  }
});

it("a user suppressed, and the suppression lifted, through another handle reach the worker's cached suppression checks at once", async () => {
  // openStore's own wiring, as src/worker.ts opens it, with a TTL far too long to hide a missed change.
  const cachedWorker = await openStore({ databasePath: '', databaseUrl: url, destinationCacheTtlMs: HOUR });
  const user = `suppressed-${Date.now()}`;
  const read = () => cachedWorker.suppressions.of([user, 'someone else']);
  try {
    expect(await read()).toEqual([]);
    // Served from the worker's copy: a row written behind the cache's back (notification off) is not noticed...
    await sql`alter table suppressed_ids disable trigger suppressed_ids_notify`.execute(db);
    await api.suppressions.add([user], '2026-11-23T09:00:00.000Z');
    await sql`alter table suppressed_ids enable trigger suppressed_ids_notify`.execute(db);
    expect(await read()).toEqual([]);
    // ...and a regulation's suppression and its lifting, which notify, are.
    await api.suppressions.add([user], '2026-11-23T10:00:00.000Z');
    expect(await within(2_000, read, (s) => s.length === 1 && s[0].suppressedAt === '2026-11-23T10:00:00.000Z')).toBeLessThan(2_000);
    await api.suppressions.lift([user], '2026-11-23T11:00:00.000Z');
    await within(2_000, read, (s) => s[0]?.liftedAt === '2026-11-23T11:00:00.000Z');
  } finally {
    await cachedWorker.close();
  }
});

it.each([
  ['switched off', (id: string) => api.destinations.update(id, { enabled: false }), (d: any) => d?.enabled === false],
  ['a new shared secret', (id: string) => api.destinations.update(id, { sharedSecret: 'two' }), (d: any) => d?.sharedSecret === 'two'],
  ['a new signing secret', (id: string) => api.destinations.update(id, { signingSecret: 'whsec_dGVzdA==' }), (d: any) => d?.signing?.current === 'whsec_dGVzdA=='],
  ['a URL switched off by a 410', (id: string) => api.destinations.disableWebhook(id, 'https://hooks.example.com/a', 'gone'), (d: any) => d?.webhooks[0].disabled?.reason === 'gone'],
  ['new headers', (id: string) => api.destinations.update(id, { webhooks: [{ url: 'https://hooks.example.com/a', headers: { 'x-new': '1' } }] }), (d: any) => d?.webhooks[0].headers['x-new'] === '1'],
  ['deleted', (id: string) => api.destinations.delete(id), (d: any) => d === undefined],
] as const)('a destination %s through another handle reaches the cached copy at once', async (_name, change, changed) => {
  const { destination } = await cachedDestination();
  await change(destination.id);
  expect(await within(2_000, () => worker.get(destination.id), changed)).toBeLessThan(2_000);
});

it('a URL switched back on (its disabled row deleted) reaches the cached copy at once', async () => {
  const { destination } = await cachedDestination();
  await api.destinations.disableWebhook(destination.id, 'https://hooks.example.com/a', 'gone');
  await within(2_000, () => worker.get(destination.id), (d) => d?.webhooks[0].disabled !== undefined);
  await api.destinations.update(destination.id, { webhooks: [{ url: 'https://hooks.example.com/a', headers: {}, enabled: true }] });
  await within(2_000, () => worker.get(destination.id), (d) => d?.webhooks[0].disabled === undefined);
});

it('a source deleted (its destinations cascade) reaches the cached copy at once', async () => {
  const { source, destination } = await cachedDestination();
  await api.sources.delete(source.id);
  await within(2_000, () => worker.get(destination.id), (d) => d === undefined);
});

it("an operational endpoint made, switched off or deleted through another handle reaches the worker's copy at once", async () => {
  expect(endpointCopy.isListening).toBe(true);
  const before = await workerEndpoints.listCached();
  const made = await api.operationalEndpoints.create({ url: 'https://ops.example.com/notified', eventTypes: [], format: 'standard', enabled: true }, 'whsec_not-a-real-one');
  const listed = () => workerEndpoints.listCached();
  await within(2_000, listed, (list) => list.some((e) => e.id === made.id && e.enabled));
  await api.operationalEndpoints.update(made.id, { enabled: false });
  await within(2_000, listed, (list) => list.some((e) => e.id === made.id && !e.enabled));
  await api.operationalEndpoints.delete(made.id);
  await within(2_000, listed, (list) => list.length === before.length && !list.some((e) => e.id === made.id));
});

it('bypasses the cache while the LISTEN connection is down, and caches again once it is back', async () => {
  const { destination } = await cachedDestination();
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    const { rows } = await admin.query('select pg_terminate_backend(pid) as ok from pg_stat_activity where application_name = $1 and datname = current_database()', [LISTENER_APPLICATION_NAME]);
    expect(rows).toHaveLength(1);
    await within(2_000, async () => cache.isListening || erasureCache.isListening, (listening) => !listening);
    // Down: every read goes to the database (a change now would have no notification to bring it).
    const misses = cache.misses;
    await worker.get(destination.id);
    await worker.get(destination.id);
    expect(cache.misses).toBe(misses + 2);
    // Back within the reconnect delay, LISTENing again: changes are seen and copies kept.
    await within(5_000, async () => cache.isListening, (listening) => listening);
    await worker.get(destination.id);
    const hits = cache.hits;
    await worker.get(destination.id);
    expect(cache.hits).toBe(hits + 1);
    expect(cache.misses).toBe(misses + 3);
    await api.destinations.update(destination.id, { enabled: false });
    await within(2_000, () => worker.get(destination.id), (d) => d?.enabled === false);
    expect(erasureCache.isListening).toBe(true);
  } finally {
    await admin.end();
  }
});

it('bypasses the caches when notifications stop arriving on a connection that never closed, and recovers on a new one', async () => {
  // A TCP relay to PostgreSQL whose existing connections can be frozen: bytes stop, nothing closes
  // (a dead network path, or a LISTEN that hears nothing behind a transaction-pooling proxy).
  const pairs: { client: net.Socket; server: net.Socket; frozen: boolean }[] = [];
  const target = new URL(url);
  const relay = net.createServer((client) => {
    const server = net.connect(Number(target.port), target.hostname);
    const pair = { client, server, frozen: false };
    pairs.push(pair);
    client.on('data', (data) => void (pair.frozen || server.write(data)));
    server.on('data', (data) => void (pair.frozen || client.write(data)));
    client.on('error', () => undefined);
    server.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const relayed = new URL(url);
  relayed.port = String((relay.address() as net.AddressInfo).port);
  const caches = { destinations: new NotifiedCache(HOUR), erasures: new NotifiedCache(HOUR) };
  const relayedListener = await listenForStoreChanges(relayed.href, caches, { notify, probeEveryMs: 300, reconnectMs: 200 });
  try {
    expect(caches.destinations.isListening).toBe(true);
    for (const pair of pairs) pair.frozen = true;
    // The next probe goes unanswered: both caches step aside within about two probe intervals.
    const stepAsideMs = await within(3_000, async () => caches.destinations.isListening || caches.erasures.isListening, (listening) => !listening);
    expect(stepAsideMs).toBeLessThan(1_500);
    // A new connection (not frozen) LISTENs and hears its probe: cached again.
    await within(5_000, async () => caches.destinations.isListening && caches.erasures.isListening, (listening) => listening);
  } finally {
    await relayedListener.close();
    for (const pair of pairs) {
      pair.client.destroy();
      pair.server.destroy();
    }
    await new Promise((resolve) => relay.close(resolve));
  }
});
