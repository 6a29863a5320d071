import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { parseKeyring, type Keyring } from '../../src/privacy/keyring';
import type { Store } from '../../src/store';
import type { Tables } from '../../src/store/tables';
import { postgresStoreDatabase } from '../helpers/postgres-store-database';
import { sqliteStoreFile } from '../helpers/sqlite-store-file';
import { createTestDatabase } from '../helpers/postgres';

/**
 * Receiver credentials — shared secrets, Standard Webhooks signing secrets (current
 * and rotated out) and static header values — are stored sealed under the payload keyring, bound to
 * their destination and field; a row written in plaintext before (older versions, or
 * PAYLOAD_ENCRYPTION=off) is sealed by the first process with keys; a rotated-out signing secret
 * leaves the row when its overlap ends. Run on a SQLite file and on a real PostgreSQL database.
 */

const k1 = `k1=${Buffer.alloc(32, 11).toString('base64')}`;
const k2 = `k2=${Buffer.alloc(32, 22).toString('base64')}`;
const ONLY_K1 = parseKeyring(k1);
const K2_ACTIVE = parseKeyring(`${k1},${k2}`, 'k2', 'k1');
const ONLY_K2 = parseKeyring(`${k2},${k1.replace('k1=', 'hash=')}`, 'k2', 'hash');

const mark = (what: string) => `${what}-${randomBytes(12).toString('hex')}`;
const whsec = () => `whsec_${randomBytes(32).toString('base64')}`;

interface Database {
  open(keyring?: Keyring): Promise<Store>;
  raw(): Kysely<Tables>;
  /** SQLite only: every byte SQLite has written for the store (the file and its WAL). */
  fileBytes?(): Buffer;
  close(): Promise<void>;
}

function sqliteDatabase(): Database {
  const { open, raw, fileBytes, close } = sqliteStoreFile('credentials');
  return { open, raw, fileBytes, close };
}

async function postgresDatabase(): Promise<Database> {
  return postgresStoreDatabase(await createTestDatabase('switchyard_credentials'));
}

/** Every form a leaked credential could take in a row or a file: as is, and base64 (a signing key's own form). */
function leaks(text: string | Buffer, secrets: string[]): string[] {
  const haystack = Buffer.isBuffer(text) ? text : Buffer.from(text);
  return secrets.filter((secret) => haystack.includes(Buffer.from(secret)) || haystack.includes(Buffer.from(Buffer.from(secret).toString('base64'))));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each([
  ['sqlite', async () => sqliteDatabase()],
  ['postgres', postgresDatabase],
] as const)('receiver credentials at rest on %s', (_name, makeDatabase) => {
  let database: Database;
  let raw: Kysely<Tables>;

  beforeAll(async () => {
    database = await makeDatabase();
    raw = database.raw();
  });
  afterAll(async () => {
    await database?.close();
  });

  const row = (id: string) => raw.selectFrom('destinations').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  it('stores shared secrets, signing secrets (current and rotated out) and header values sealed; every keyed process reads them back', async () => {
    const [shared, header, otherHeader, signing, next] = [mark('shared-secret'), `Bearer ${mark('header-value')}`, mark('api-key'), whsec(), whsec()];
    const api = await database.open(ONLY_K1);
    const worker = await database.open(ONLY_K1);
    try {
      const { source } = await api.sources.create('sealed');
      const created = await api.destinations.create(source.id, {
        enabled: true,
        sharedSecret: shared,
        signingSecret: signing,
        webhooks: [
          { url: 'https://hooks.example.com/a', headers: { Authorization: header } },
          { url: 'https://hooks.example.com/b', headers: { Authorization: header, 'X-Api-Key': otherHeader } },
        ],
      });
      const rotated = await api.destinations.update(created.id, { signingSecret: next, signingSecretOverlapMs: 3_600_000 });
      const expected = {
        sharedSecret: shared,
        signing: { current: next, previous: { secret: signing, until: expect.any(String) } },
        webhooks: [
          { url: 'https://hooks.example.com/a', headers: { Authorization: header } },
          { url: 'https://hooks.example.com/b', headers: { Authorization: header, 'X-Api-Key': otherHeader } },
        ],
      };
      expect(rotated).toMatchObject(expected);
      expect(await worker.destinations.get(created.id)).toEqual(rotated);
      expect(await worker.destinations.listBySource(source.id)).toEqual([rotated]);

      const stored = await row(created.id);
      expect(stored.credentials_key_id).toBe('k1');
      expect(leaks(JSON.stringify(stored), [shared, header, otherHeader, signing, next])).toEqual([]);
      // The header names and URLs stay readable: the admin API lists them, the worker routes by them.
      expect(JSON.parse(stored.webhooks)).toEqual([
        { url: 'https://hooks.example.com/a', headers: { Authorization: expect.any(String) } },
        { url: 'https://hooks.example.com/b', headers: { Authorization: expect.any(String), 'X-Api-Key': expect.any(String) } },
      ]);
      // The same value sealed twice is two different strings (a fresh nonce each): equal headers do not show as equal.
      const [a, b] = JSON.parse(stored.webhooks) as { headers: Record<string, string> }[];
      expect(a.headers.Authorization).not.toBe(b.headers.Authorization);
      if (database.fileBytes) expect(leaks(database.fileBytes(), [shared, header, otherHeader, signing, next])).toEqual([]);
    } finally {
      await api.close();
      await worker.close();
    }
  });

  it("stores a function destination's settings sealed, and every keyed process reads them back", async () => {
    const apiKey = mark('function-api-key');
    const api = await database.open(ONLY_K1);
    const worker = await database.open(ONLY_K1);
    try {
      const { source } = await api.sources.create('sealed function');
      const fn = await api.functions.create({ resourceType: 'DESTINATION', displayName: 'Sender', description: null, logoUrl: null, settings: [], code: 'function onTrack() {}' });
      const created = await api.destinations.create(source.id, { enabled: true, type: 'function', webhooks: [], function: { functionId: fn.id, settings: { apiKey, url: 'https://crm.example.com' } } });
      expect(created.function).toEqual({ functionId: fn.id, settings: { apiKey, url: 'https://crm.example.com' } });
      expect((await worker.destinations.get(created.id))?.function).toEqual(created.function);
      const stored = await row(created.id);
      expect(stored.credentials_key_id).toBe('k1');
      expect(leaks(JSON.stringify(stored), [apiKey])).toEqual([]);
      if (database.fileBytes) expect(leaks(database.fileBytes(), [apiKey])).toEqual([]);
    } finally {
      await api.close();
      await worker.close();
    }
  });

  it("stores a source function's settings sealed, bound to their source; a row written in plaintext still reads", async () => {
    const apiKey = mark('source-function-api-key');
    const api = await database.open(ONLY_K1);
    const worker = await database.open(ONLY_K1);
    try {
      const fn = await api.functions.create({ resourceType: 'SOURCE', displayName: 'Orders', description: null, logoUrl: null, settings: [], code: 'function onRequest() {}' });
      const { source } = await api.sources.create('sealed source function', { function: { functionId: fn.id, settings: { apiKey } } });
      expect(source.function).toEqual({ functionId: fn.id, settings: { apiKey } });
      expect((await worker.sources.get(source.id))?.function).toEqual(source.function);
      const updated = await api.sources.update(source.id, { function: { functionId: fn.id, settings: { apiKey, region: 'eu' } } });
      expect(updated?.function?.settings).toEqual({ apiKey, region: 'eu' });
      const stored = await raw.selectFrom('sources').selectAll().where('id', '=', source.id).executeTakeFirstOrThrow();
      expect(stored.function_settings).toMatch(/^sealed:k1:/);
      expect(leaks(JSON.stringify(stored), [apiKey])).toEqual([]);
      if (database.fileBytes) expect(leaks(database.fileBytes(), [apiKey])).toEqual([]);
      // Moved onto another source, the sealed settings do not open; the error names the source, never the value.
      const { source: other } = await api.sources.create('other source function', { function: { functionId: fn.id, settings: {} } });
      await raw.updateTable('sources').set({ function_settings: stored.function_settings }).where('id', '=', other.id).execute();
      // Only that source's function fails for it (its settings read as none, with why): the source still reads.
      expect((await worker.sources.get(other.id))?.function).toEqual({ functionId: fn.id, settings: {}, unreadable: `source ${other.id}: its sealed sourceFunctionSettings does not authenticate (altered, or copied from another destination or field)` });
      // A process without payload keys reads every source; the sealed function's settings only say why they do not open.
      const unkeyed = await database.open();
      try {
        expect((await unkeyed.sources.get(source.id))?.function).toEqual({ functionId: fn.id, settings: {}, unreadable: expect.stringContaining('this process has no payload keys') });
        expect((await unkeyed.sources.list()).map((s) => s.id)).toEqual(expect.arrayContaining([source.id, other.id]));
      } finally {
        await unkeyed.close();
      }
      // Written as plain JSON (an older version, or PAYLOAD_ENCRYPTION=off): read as written.
      await raw.updateTable('sources').set({ function_settings: JSON.stringify({ apiKey: 'plain' }) }).where('id', '=', other.id).execute();
      expect((await worker.sources.get(other.id))?.function?.settings).toEqual({ apiKey: 'plain' });
      // The next process with keys seals it (under k2, now active); resealCredentials moves the k1 one to k2.
      const next = await database.open(K2_ACTIVE);
      try {
        const resealed = await raw.selectFrom('sources').select('function_settings').where('id', '=', other.id).executeTakeFirstOrThrow();
        expect(resealed.function_settings).toMatch(/^sealed:k2:/);
        while ((await next.destinations.resealCredentials(100)).left);
        const moved = await raw.selectFrom('sources').select('function_settings').where('id', 'in', [source.id, other.id]).execute();
        expect(moved.map((r) => r.function_settings?.slice(0, 'sealed:k2:'.length))).toEqual(['sealed:k2:', 'sealed:k2:']);
        expect((await next.sources.get(other.id))?.function?.settings).toEqual({ apiKey: 'plain' });
        expect((await next.sources.get(source.id))?.function?.settings).toEqual({ apiKey, region: 'eu' });
      } finally {
        await next.close();
      }
    } finally {
      await api.close();
      await worker.close();
    }
  });

  it('a sealed value moved onto another destination or another field does not open, and the error names neither value', async () => {
    const [secretA, secretB] = [mark('secret-a'), mark('secret-b')];
    const store = await database.open(ONLY_K1);
    try {
      const { source } = await store.sources.create('moved');
      const a = await store.destinations.create(source.id, { enabled: true, sharedSecret: secretA, signingSecret: whsec(), webhooks: [] });
      const b = await store.destinations.create(source.id, { enabled: true, sharedSecret: secretB, webhooks: [] });
      await raw
        .updateTable('destinations')
        .set({ shared_secret: (await row(a.id)).shared_secret })
        .where('id', '=', b.id)
        .execute();
      const moved = await store.destinations.get(b.id).then(
        () => undefined,
        (err: Error) => err.message,
      );
      expect(moved).toBe(`destination ${b.id}: its sealed sharedSecret does not authenticate (altered, or copied from another destination or field)`);
      await raw
        .updateTable('destinations')
        .set({ shared_secret: (await row(a.id)).signing_secret })
        .where('id', '=', a.id)
        .execute();
      await expect(store.destinations.get(a.id)).rejects.toThrow(`destination ${a.id}: its sealed sharedSecret does not authenticate`);
      // Tampered rows leave: the re-sealing below would (rightly) stop at them.
      await raw.deleteFrom('destinations').where('id', 'in', [a.id, b.id]).execute();
    } finally {
      await store.close();
    }
  });

  it('a row written in plaintext by an older version is sealed when the first process with keys opens the store', async () => {
    const [shared, header, signing, previous] = [mark('old-shared'), mark('old-header'), whsec(), whsec()];
    const upgraded = await makeDatabase();
    const oldRaw = upgraded.raw();
    try {
      await (await upgraded.open()).close();
      // Rows an older Switchyard (or one with PAYLOAD_ENCRYPTION=off) wrote, as migration 0012 leaves
      // them: plaintext values, credentials_key_id null (the column it adds). Kysely's migrator
      // refuses to forget a migration with later ones applied, so the schema itself stays current.
      const until = new Date(Date.now() + 3_600_000).toISOString();
      const now = new Date().toISOString();
      await oldRaw.insertInto('sources').values({ id: 'src_old', name: 'old', write_key_hash: 'x', write_key_hint: 'xxxx', created_at: now }).execute();
      await sql`insert into destinations (id, source_id, name, enabled, shared_secret, webhooks, created_at, updated_at, signing_secret, previous_signing_secret, previous_signing_secret_until, max_requests_per_second, paused, paused_at)
        values ('dst_old', 'src_old', 'Webhooks', 1, ${shared}, ${JSON.stringify([{ url: 'https://hooks.example.com/old', headers: { Authorization: header } }])}, ${now}, ${now}, ${signing}, ${previous}, ${until}, null, 0, null)`.execute(
        oldRaw,
      );
      await sql`insert into destinations (id, source_id, name, enabled, shared_secret, webhooks, created_at, updated_at, signing_secret, previous_signing_secret, previous_signing_secret_until, max_requests_per_second, paused, paused_at)
        values ('dst_plain', 'src_old', 'Webhooks', 1, null, ${JSON.stringify([{ url: 'https://hooks.example.com/plain', headers: {} }])}, ${now}, ${now}, null, null, null, null, 0, null)`.execute(oldRaw);

      const keyed = await upgraded.open(ONLY_K1);
      try {
        expect(await keyed.destinations.get('dst_old')).toMatchObject({
          sharedSecret: shared,
          signing: { current: signing, previous: { secret: previous, until } },
          webhooks: [{ url: 'https://hooks.example.com/old', headers: { Authorization: header } }],
          updatedAt: now,
        });
        expect(await keyed.destinations.get('dst_plain')).toMatchObject({ sharedSecret: null, signing: null, webhooks: [{ url: 'https://hooks.example.com/plain', headers: {} }] });
        const sealed = await oldRaw.selectFrom('destinations').selectAll().where('id', '=', 'dst_old').executeTakeFirstOrThrow();
        expect(sealed.credentials_key_id).toBe('k1');
        expect(leaks(JSON.stringify(sealed), [shared, header, signing, previous])).toEqual([]);
        if (upgraded.fileBytes) expect(leaks(upgraded.fileBytes(), [shared, header, signing, previous])).toEqual([]);
        // A second process with keys finds nothing left to seal.
        await (await upgraded.open(ONLY_K1)).close();
        expect(await oldRaw.selectFrom('destinations').selectAll().where('id', '=', 'dst_old').executeTakeFirstOrThrow()).toEqual(sealed);
      } finally {
        await keyed.close();
      }
    } finally {
      await upgraded.close();
    }
  });

  it('with PAYLOAD_ENCRYPTION=off stores them as given, sealed by the next process with keys; a process without keys names the key a sealed row needs', async () => {
    const shared = mark('unkeyed-secret');
    const unkeyed = await database.open();
    try {
      const { source } = await unkeyed.sources.create('unkeyed');
      const plain = await unkeyed.destinations.create(source.id, { enabled: true, sharedSecret: shared, webhooks: [] });
      expect((await row(plain.id)).shared_secret).toBe(shared);
      expect((await row(plain.id)).credentials_key_id).toBeNull();

      const keyed = await database.open(ONLY_K1);
      try {
        expect((await row(plain.id)).credentials_key_id).toBe('k1');
        expect(leaks(JSON.stringify(await row(plain.id)), [shared])).toEqual([]);
        expect((await keyed.destinations.get(plain.id))?.sharedSecret).toBe(shared);
      } finally {
        await keyed.close();
      }
      await expect(unkeyed.destinations.get(plain.id)).rejects.toThrow(
        `destination ${plain.id}: its credentials are sealed under payload key "k1", and this process has no payload keys (PAYLOAD_ENCRYPTION=off); list the keys in PAYLOAD_KEYS`,
      );
    } finally {
      await unkeyed.close();
    }
  });

  it('after a master-key rotation, rows under the old key still read; resealCredentials moves them to the active key, and the old key can go', async () => {
    const [shared, header, signing] = [mark('rotated-shared'), mark('rotated-header'), whsec()];
    const before = await database.open(ONLY_K1);
    let id: string;
    try {
      const { source } = await before.sources.create('rotation');
      id = (await before.destinations.create(source.id, { enabled: true, sharedSecret: shared, signingSecret: signing, webhooks: [{ url: 'https://hooks.example.com/r', headers: { 'X-Key': header } }] })).id;
    } finally {
      await before.close();
    }
    const during = await database.open(K2_ACTIVE);
    try {
      const read = await during.destinations.get(id);
      expect(read).toMatchObject({ sharedSecret: shared, signing: { current: signing }, webhooks: [{ headers: { 'X-Key': header } }] });
      expect(await during.destinations.credentialsByMasterKey()).toMatchObject({ k1: expect.any(Number) });
      let resealed = 0;
      for (;;) {
        const step = await during.destinations.resealCredentials(2);
        resealed += step.resealed;
        if (!step.left) break;
      }
      expect(resealed).toBeGreaterThanOrEqual(1);
      expect(await during.destinations.credentialsByMasterKey()).toEqual({ k2: expect.any(Number) });
      expect((await row(id)).credentials_key_id).toBe('k2');
      expect(await during.destinations.get(id)).toEqual(read);
    } finally {
      await during.close();
    }
    const after = await database.open(ONLY_K2);
    try {
      expect(await after.destinations.get(id)).toMatchObject({ sharedSecret: shared, signing: { current: signing }, webhooks: [{ headers: { 'X-Key': header } }] });
    } finally {
      await after.close();
    }
  });

  it('deletes a rotated-out signing secret from the row once its overlap ends, not only stops signing with it', async () => {
    const store = await database.open(ONLY_K1);
    try {
      const { source } = await store.sources.create('overlap');
      const [old, current] = [whsec(), whsec()];
      const d = await store.destinations.create(source.id, { enabled: true, signingSecret: old, webhooks: [] });
      const rotated = await store.destinations.update(d.id, { signingSecret: current, signingSecretOverlapMs: 300 });
      const until = Date.parse(rotated!.signing!.previous!.until);
      expect((await row(d.id)).previous_signing_secret).not.toBeNull();
      const kept = await store.destinations.create(source.id, { enabled: true, signingSecret: whsec(), webhooks: [] });
      await store.destinations.update(kept.id, { signingSecret: whsec(), signingSecretOverlapMs: 3_600_000 });

      // Before the end: nothing to drop, and the earliest end still to come is this one's.
      expect(await store.destinations.dropEndedSigningOverlaps(until - 1)).toEqual({ dropped: 0, nextEndMs: until });
      await sleep(Math.max(0, until - Date.now()) + 20);
      expect(await store.destinations.dropEndedSigningOverlaps(Date.now())).toMatchObject({ dropped: 1 });
      expect(await row(d.id)).toMatchObject({ previous_signing_secret: null, previous_signing_secret_until: null });
      expect((await store.destinations.get(d.id))?.signing).toEqual({ current });
      expect((await row(kept.id)).previous_signing_secret).not.toBeNull();

      // Any later write of the row drops an ended overlap too.
      const again = await store.destinations.create(source.id, { enabled: true, signingSecret: old, webhooks: [] });
      await store.destinations.update(again.id, { signingSecret: current, signingSecretOverlapMs: 50 });
      await sleep(80);
      await store.destinations.update(again.id, { name: 'renamed' });
      expect(await row(again.id)).toMatchObject({ previous_signing_secret: null, previous_signing_secret_until: null });
    } finally {
      await store.close();
    }
  });
});
