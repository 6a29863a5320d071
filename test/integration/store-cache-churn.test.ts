import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { openStore, type Store } from '../../src/store';
import { connectPostgres, postgresPool } from '../../src/store/connection';
import { dataKeyStore } from '../../src/store/data-keys';
import { erasedIdHashes, erasureStore } from '../../src/store/erasures';
import { cachedDataKeyReads, cachedErasureReads, NotifiedCache } from '../../src/store/notified-cache';
import { listenForStoreChanges, type StoreListener } from '../../src/store/store-notifications';
import type { Destination } from '../../src/store/types';
import { identifierHash, parseKeyring } from '../../src/privacy/keyring';
import { createTestDatabase } from '../helpers/postgres';

/**
 * Two store handles on one database, as an API process and a worker process have
 * them. A new user's data key (made for every new user's first call) must not empty the worker's
 * caches of erasure answers and data keys of every other user; an erasure or a destroyed key still
 * reaches the worker's copy at once. On PostgreSQL the worker's caches count their hits: a read
 * served from the copy after the newcomer's key proves the copy was not dropped.
 */

const HOUR = 3_600_000;
const keyring = parseKeyring(`k1=${Buffer.alloc(32, 5).toString('base64')}`, 'k1');
const unique = (name: string) => `${name}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
const subject = (userId: string) => identifierHash(keyring, 'userId', userId);

/** Polls until `check` holds (a notification arrives within milliseconds). */
async function within<T>(ms: number, read: () => Promise<T>, check: (value: T) => boolean): Promise<void> {
  const started = Date.now();
  while (!check(await read())) {
    if (Date.now() - started > ms) throw new Error(`not seen within ${ms} ms: ${JSON.stringify(await read())}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('on PostgreSQL, where the worker caches', () => {
  let url: string;
  let api: Store;
  let db: ReturnType<typeof connectPostgres>;
  let listener: StoreListener;
  // The worker's caches, wired as openStore wires them for a worker (src/store/index.ts), so their hits can be counted.
  const caches = { destinations: new NotifiedCache<Destination | undefined>(HOUR), erasures: new NotifiedCache<string | undefined>(HOUR), dataKeys: new NotifiedCache<Buffer | null>(HOUR) };
  let workerKeys: Store['dataKeys'];
  let workerErasures: Store['erasures'];

  beforeAll(async () => {
    url = await createTestDatabase('switchyard_churn');
    api = await openStore({ databasePath: '', databaseUrl: url, keyring });
    db = connectPostgres(postgresPool(url));
    const notify = async (channel: string, payload: string) => void (await sql`select pg_notify(${channel}, ${payload})`.execute(db));
    listener = await listenForStoreChanges(url, caches, { notify });
    workerKeys = cachedDataKeyReads(dataKeyStore(db, keyring), caches.dataKeys);
    workerErasures = cachedErasureReads(db, erasureStore(db, erasedIdHashes(keyring)), caches.erasures, erasedIdHashes(keyring));
  });
  afterAll(async () => {
    await listener?.close();
    await db?.destroy();
    await api?.close();
  });

  /** Reads until the read is served from the worker's copy (the notification of the row's own write may arrive after the first read). */
  async function cached<T>(cache: NotifiedCache<unknown>, read: () => Promise<T>): Promise<T> {
    const started = Date.now();
    for (;;) {
      const hits = cache.hits;
      const value = await read();
      if (cache.hits > hits) return value;
      if (Date.now() - started > 2_000) throw new Error('never served from the cache');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  it("a new user's data key drops only that user's cached entry, not the other users' keys and erasure answers", async () => {
    const known = unique('known');
    const newcomer = unique('newcomer');
    const keyOfKnown = (await api.dataKeys.getOrCreate([subject(known)])).get(subject(known))!;
    // The worker's copies: the known user's key, the known user not erased, the newcomer without a key.
    expect((await cached(caches.dataKeys, () => workerKeys.get(subject(known))))?.equals(keyOfKnown)).toBe(true);
    expect(await cached(caches.erasures, () => workerErasures.erasedAt([known]))).toBeUndefined();
    expect(await cached(caches.dataKeys, () => workerKeys.get(subject(newcomer)))).toBeUndefined();

    // The newcomer's first call makes its key: the worker sees it at once (its cached "none" dropped)...
    const keyOfNewcomer = (await api.dataKeys.getOrCreate([subject(newcomer)])).get(subject(newcomer))!;
    await within(2_000, () => workerKeys.get(subject(newcomer)), (key) => key?.equals(keyOfNewcomer) === true);
    // ...and still serves its copies about the known user.
    const misses = { keys: caches.dataKeys.misses, erasures: caches.erasures.misses };
    expect((await workerKeys.get(subject(known)))?.equals(keyOfKnown)).toBe(true);
    expect(await workerErasures.erasedAt([known])).toBeUndefined();
    expect({ keys: caches.dataKeys.misses, erasures: caches.erasures.misses }).toEqual(misses);
  });

  it("an erasure and a destroyed key made through the other handle still reach the worker's copies at once", async () => {
    const user = unique('erased');
    const bystander = unique('bystander');
    const keys = await api.dataKeys.getOrCreate([subject(user), subject(bystander)]);
    expect((await cached(caches.dataKeys, () => workerKeys.get(subject(user))))?.equals(keys.get(subject(user))!)).toBe(true);
    expect((await cached(caches.dataKeys, () => workerKeys.get(subject(bystander))))?.equals(keys.get(subject(bystander))!)).toBe(true);
    expect(await cached(caches.erasures, () => workerErasures.erasedAt([user]))).toBeUndefined();

    await api.erasures.add([user], '2026-11-27T11:00:00.000Z');
    await api.dataKeys.destroy([subject(user)]);
    await within(2_000, () => workerErasures.erasedAt([user]), (at) => at === '2026-11-27T11:00:00.000Z');
    await within(2_000, () => workerKeys.get(subject(user)), (key) => key === undefined);
    const misses = caches.dataKeys.misses;
    expect((await workerKeys.get(subject(bystander)))?.equals(keys.get(subject(bystander))!)).toBe(true);
    expect(caches.dataKeys.misses).toBe(misses);
  });
});

describe('on one SQLite file, where nothing is cached', () => {
  let dir: string;
  let api: Store;
  let worker: Store;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-churn-'));
    api = await openStore({ databasePath: path.join(dir, 'switchyard.db'), keyring });
    worker = await openStore({ databasePath: path.join(dir, 'switchyard.db'), keyring, destinationCacheTtlMs: HOUR });
  });
  afterAll(async () => {
    await api?.close();
    await worker?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("a new user's key, an erasure and a destroyed key made through one handle are read by the other as they are", async () => {
    const user = unique('sqlite-user');
    const newcomer = unique('sqlite-newcomer');
    const key = (await api.dataKeys.getOrCreate([subject(user)])).get(subject(user))!;
    expect((await worker.dataKeys.get(subject(user)))?.equals(key)).toBe(true);
    await api.dataKeys.getOrCreate([subject(newcomer)]);
    expect((await worker.dataKeys.get(subject(user)))?.equals(key)).toBe(true);
    expect(await worker.dataKeys.get(subject(newcomer))).toBeDefined();
    await api.erasures.add([user], '2026-11-27T12:00:00.000Z');
    await api.dataKeys.destroy([subject(user)]);
    expect(await worker.erasures.erasedAt([user])).toBe('2026-11-27T12:00:00.000Z');
    expect(await worker.dataKeys.get(subject(user))).toBeUndefined();
  });
});
