import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { openStore, type Store } from '../../src/store';
import { connectPostgres, postgresPool } from '../../src/store/connection';
import { erasedIdHashes } from '../../src/store/erasures';
import { identifierHash, parseKeyring } from '../../src/privacy/keyring';
import { createTestDatabase } from '../helpers/postgres';

/**
 * Issue 29 item 11: two store handles on one database, as an API process and a worker process have
 * them. A new user's data key (made for every new user's first call) must not empty the worker's
 * caches of erasure answers and data keys of every other user; an erasure or a destroyed key still
 * reaches the worker's copy at once. The worker's copies are observed by changing rows behind the
 * caches' back (their triggers off): a copy still served proves it was not dropped.
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
  let worker: Store;
  let db: ReturnType<typeof connectPostgres>;

  beforeAll(async () => {
    url = await createTestDatabase('switchyard_churn');
    api = await openStore({ databasePath: '', databaseUrl: url, keyring });
    worker = await openStore({ databasePath: '', databaseUrl: url, keyring, destinationCacheTtlMs: HOUR });
    db = connectPostgres(postgresPool(url));
  });
  afterAll(async () => {
    await db?.destroy();
    await api?.close();
    await worker?.close();
  });

  /** Changes rows with the notifying triggers off: the caches are not told. */
  async function behindTheCaches(change: () => Promise<unknown>) {
    await sql`alter table data_keys disable trigger data_keys_notify`.execute(db);
    await sql`alter table erased_ids disable trigger erased_ids_notify`.execute(db);
    try {
      await change();
    } finally {
      await sql`alter table data_keys enable trigger data_keys_notify`.execute(db);
      await sql`alter table erased_ids enable trigger erased_ids_notify`.execute(db);
    }
  }

  it("a new user's data key drops only that user's cached entry, not the other users' keys and erasure answers", async () => {
    const known = unique('known');
    const newcomer = unique('newcomer');
    const keyOfKnown = (await api.dataKeys.getOrCreate([subject(known)])).get(subject(known))!;
    // The worker's copies: the known user's key, the known user not erased, the newcomer without a key.
    await within(2_000, () => worker.dataKeys.get(subject(known)), (key) => key?.equals(keyOfKnown) === true);
    expect(await worker.erasures.erasedAt([known])).toBeUndefined();
    expect(await worker.dataKeys.get(subject(newcomer))).toBeUndefined();

    await behindTheCaches(async () => {
      await sql`delete from data_keys where subject_hash = ${subject(known)}`.execute(db);
      await sql`insert into erased_ids (id_hash, erased_at) values (${erasedIdHashes(keyring)(known)[0]}, '2026-11-27T10:00:00.000Z')`.execute(db);
    });
    // The newcomer's first call makes its key: the worker sees it at once (its cached "none" dropped)...
    const keyOfNewcomer = (await api.dataKeys.getOrCreate([subject(newcomer)])).get(subject(newcomer))!;
    await within(2_000, () => worker.dataKeys.get(subject(newcomer)), (key) => key?.equals(keyOfNewcomer) === true);
    // ...and still serves its copies about the known user (the rows changed behind its back prove they were kept).
    expect((await worker.dataKeys.get(subject(known)))?.equals(keyOfKnown)).toBe(true);
    expect(await worker.erasures.erasedAt([known])).toBeUndefined();
  });

  it("an erasure and a destroyed key made through the other handle still reach the worker's copies at once", async () => {
    const user = unique('erased');
    const bystander = unique('bystander');
    const keys = await api.dataKeys.getOrCreate([subject(user), subject(bystander)]);
    await within(2_000, () => worker.dataKeys.get(subject(user)), (key) => key?.equals(keys.get(subject(user))!) === true);
    await within(2_000, () => worker.dataKeys.get(subject(bystander)), (key) => key?.equals(keys.get(subject(bystander))!) === true);
    expect(await worker.erasures.erasedAt([user])).toBeUndefined();

    await api.erasures.add([user], '2026-11-27T11:00:00.000Z');
    await api.dataKeys.destroy([subject(user)]);
    await within(2_000, () => worker.erasures.erasedAt([user]), (at) => at === '2026-11-27T11:00:00.000Z');
    await within(2_000, () => worker.dataKeys.get(subject(user)), (key) => key === undefined);
    expect((await worker.dataKeys.get(subject(bystander)))?.equals(keys.get(subject(bystander))!)).toBe(true);
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
