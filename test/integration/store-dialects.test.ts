import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { identifierHash, parseKeyring, type Keyring } from '../../src/privacy/keyring';
import type { Store } from '../../src/store';
import { SWITCHED_OFF_BY_OPERATOR } from '../../src/store/destinations';
import { recordSeenUsers } from '../../src/store/source-users';
import type { Tables } from '../../src/store/tables';
import { writeTransaction } from '../../src/store/write-transaction';
import { testPostgresUrl } from '../helpers/postgres';
import { postgresStoreDatabase } from '../helpers/postgres-store-database';
import { sqliteStoreFile } from '../helpers/sqlite-store-file';

/**
 * One table of store rules, run on both dialects — a SQLite file (the embedded default)
 * and a real PostgreSQL database. The PostgreSQL database is created with an ICU en-US collation,
 * as a production server's default often is, so an ORDER BY on text that only sorted right under
 * SQLite's byte order (or PostgreSQL's "C") fails here.
 */

interface Dialect {
  /** A store handle, as one process opens it (the API, a worker); with keys when given. */
  open(keyring?: Keyring): Promise<Store>;
  /** The same database through Kysely directly: rows the Store interface does not show. */
  raw(): Kysely<Tables>;
  /** Handles that may run write transactions at the same moment (see the concurrency test). */
  concurrentHandles: number;
  close(): Promise<void>;
}

async function sqliteDialect(): Promise<Dialect> {
  const { open, raw, close } = sqliteStoreFile('dialects');
  // better-sqlite3 is synchronous: two handles of one process waiting on each other's write lock
  // would block each other's event loop, so within one process writers share one handle (the
  // worker and the API are separate processes, each with one).
  return { open, raw, concurrentHandles: 1, close };
}

async function postgresDialect(): Promise<Dialect> {
  const server = testPostgresUrl();
  const name = `switchyard_dialects_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const admin = new pg.Client({ connectionString: `${server}/postgres` });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}" TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C' LOCALE_PROVIDER icu ICU_LOCALE 'en-US'`);
  } finally {
    await admin.end();
  }
  return { ...postgresStoreDatabase(`${server}/${name}`), concurrentHandles: 2 };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each([
  ['sqlite', sqliteDialect],
  ['postgres', postgresDialect],
] as const)('store on %s', (_name, makeDialect) => {
  let dialect: Dialect;
  let store: Store;
  /** A second handle on the same database: another process's view. */
  let other: Store;
  let raw: Kysely<Tables>;

  beforeAll(async () => {
    dialect = await makeDialect();
    store = await dialect.open();
    other = await dialect.open();
    raw = dialect.raw();
  });
  afterAll(async () => {
    await store?.close();
    await other?.close();
    await dialect?.close();
  });

  const newSource = async (name = 'test') => (await store.sources.create(name)).source;
  const hook = (n: number | string) => ({ url: `https://hooks.example.com/${n}`, headers: {} });

  describe('sources', () => {
    it('creates a source whose write key is found by the key (exactly, not by its case) and shown only by its last four characters', async () => {
      const { source, writeKey } = await store.sources.create('shop');
      expect(source).toEqual({ id: expect.stringMatching(/^src_/), name: 'shop', labels: [], writeKeyHint: writeKey.slice(-4), createdAt: expect.any(String) });
      expect(await store.sources.findByWriteKey(writeKey)).toEqual(source);
      expect(await other.sources.findByWriteKey(writeKey)).toEqual(source);
      expect(await store.sources.findByWriteKey(writeKey.toUpperCase() === writeKey ? writeKey.toLowerCase() : writeKey.toUpperCase())).toBeUndefined();
      expect(await store.sources.findByWriteKey('nope')).toBeUndefined();
      expect(await store.sources.get(source.id)).toEqual(source);
      expect(await store.sources.get('src_missing')).toBeUndefined();
    });

    it('lists sources in creation order', async () => {
      const a = await newSource('a');
      await sleep(2);
      const b = await newSource('b');
      const ids = (await store.sources.list()).map((s) => s.id);
      expect(ids.indexOf(a.id)).toBeLessThan(ids.indexOf(b.id));
    });

    it('deletes a source with its destinations, their switched-off webhooks and the users it saw; a second delete is false', async () => {
      const source = await newSource();
      const keep = await newSource();
      const destination = await store.destinations.create(source.id, { enabled: true, webhooks: [hook(1), hook(2)] });
      await store.destinations.disableWebhook(destination.id, hook(1).url, 'gone');
      await recordSeenUsers(raw, source.id, [{ userId: 'deleted-source-user', linkedIds: ['deleted-source-anon'] }], new Date().toISOString());
      await recordSeenUsers(raw, keep.id, [{ userId: 'deleted-source-user', linkedIds: [] }], new Date().toISOString());

      expect(await store.sources.delete(source.id)).toBe(true);
      expect(await store.sources.delete(source.id)).toBe(false);
      expect(await other.sources.get(source.id)).toBeUndefined();
      expect(await other.destinations.get(destination.id)).toBeUndefined();
      expect(await raw.selectFrom('disabled_webhooks').selectAll().where('destination_id', '=', destination.id).execute()).toEqual([]);
      expect(await store.sourceUsers.sourcesThatSaw(['deleted-source-user'])).toEqual(new Map([[keep.id, ['deleted-source-user']]]));
      expect(await store.sourceUsers.linkedIds(['deleted-source-user'])).toEqual([]);
    });
  });

  describe('destinations', () => {
    it('creates with defaults: name "Webhooks", headers {}, an empty secret stored as none, no signing', async () => {
      const source = await newSource();
      const destination = await store.destinations.create(source.id, { enabled: true, sharedSecret: '', webhooks: [{ url: hook(1).url } as never] });
      expect(destination).toEqual({
        id: expect.stringMatching(/^dst_/),
        sourceId: source.id,
        name: 'Webhooks',
        enabled: true,
        sharedSecret: null,
        signing: null,
        webhooks: [{ url: hook(1).url, headers: {} }],
        maxRequestsPerSecond: null,
        paused: false,
        consent: { categories: [], whenAbsent: 'deliver' },
        // The seed's destination type, with no mappings, no outbound auth and no function.
        type: 'webhooks',
        mappings: [],
        auth: null,
        tls: null,
        function: null,
        // Requests carry the trace context unless the operator says not.
        propagateTraceContext: true,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      expect(await other.destinations.get(destination.id)).toEqual(destination);
      expect(await store.destinations.get('dst_missing')).toBeUndefined();
    });

    it('keeps propagateTraceContext a boolean both ways (migration 0026)', async () => {
      const source = await newSource();
      const quiet = await store.destinations.create(source.id, { enabled: true, propagateTraceContext: false, webhooks: [hook(1)] });
      expect((await other.destinations.get(quiet.id))?.propagateTraceContext).toBe(false);
      await store.destinations.update(quiet.id, { name: 'renamed' });
      expect((await other.destinations.get(quiet.id))?.propagateTraceContext).toBe(false);
      await store.destinations.update(quiet.id, { propagateTraceContext: true });
      expect((await other.destinations.get(quiet.id))?.propagateTraceContext).toBe(true);
    });

    it('keeps enabled a boolean both ways, and a webhook created with enabled: false switched off by the operator', async () => {
      const source = await newSource();
      const off = await store.destinations.create(source.id, { enabled: false, webhooks: [hook(1), { ...hook(2), enabled: false }] });
      expect(off.enabled).toBe(false);
      const read = await other.destinations.get(off.id);
      expect(read?.enabled).toBe(false);
      expect(read?.webhooks[0]).toEqual(hook(1));
      expect(read?.webhooks[1]).toEqual({ ...hook(2), disabled: { reason: SWITCHED_OFF_BY_OPERATOR, at: expect.any(String) } });
      expect((await store.destinations.update(off.id, { enabled: true }))?.enabled).toBe(true);
      expect((await other.destinations.get(off.id))?.enabled).toBe(true);
    });

    it('patches only what the patch names; an unknown id is undefined', async () => {
      const source = await newSource();
      const created = await store.destinations.create(source.id, { name: 'crm', enabled: true, sharedSecret: 's1', webhooks: [{ url: hook(1).url, headers: { authorization: 'Bearer x' } }] });
      await sleep(2);
      const renamed = await store.destinations.update(created.id, { name: 'crm 2' });
      expect(renamed).toEqual({ ...created, name: 'crm 2', updatedAt: expect.any(String) });
      expect(renamed!.updatedAt > created.updatedAt).toBe(true);
      expect(await other.destinations.get(created.id)).toEqual(renamed);
      expect((await store.destinations.update(created.id, { sharedSecret: 's2' }))?.sharedSecret).toBe('s2');
      expect((await store.destinations.update(created.id, { sharedSecret: '' }))?.sharedSecret).toBeNull();
      expect((await store.destinations.update(created.id, { webhooks: [hook(3)] }))?.webhooks).toEqual([hook(3)]);
      expect(await store.destinations.update('dst_missing', { name: 'x' })).toBeUndefined();
    });

    it('keeps a switched-off URL off when the list is re-sent without enabled, switches it on with enabled: true, and forgets it when the URL is removed', async () => {
      const source = await newSource();
      const d = await store.destinations.create(source.id, { enabled: true, webhooks: [hook(1), hook(2)] });
      expect(await store.destinations.disableWebhook(d.id, hook(2).url, 'answered HTTP 410 Gone')).toBe(true);

      const resent = await store.destinations.update(d.id, { webhooks: [hook(1), hook(2)] });
      expect(resent?.webhooks[1].disabled).toEqual({ reason: 'answered HTTP 410 Gone', at: expect.any(String) });
      const on = await store.destinations.update(d.id, { webhooks: [hook(1), { ...hook(2), enabled: true }] });
      expect(on?.webhooks[1]).toEqual(hook(2));
      await store.destinations.update(d.id, { webhooks: [hook(1), { ...hook(2), enabled: false }] });
      expect((await other.destinations.get(d.id))?.webhooks[1].disabled?.reason).toBe(SWITCHED_OFF_BY_OPERATOR);
      await store.destinations.update(d.id, { webhooks: [hook(1)] });
      const back = await store.destinations.update(d.id, { webhooks: [hook(1), hook(2)] });
      expect(back?.webhooks).toEqual([hook(1), hook(2)]);
    });

    it('disableWebhook keeps the first reason; false for a URL the destination does not have or an unknown destination', async () => {
      const source = await newSource();
      const d = await store.destinations.create(source.id, { enabled: true, webhooks: [hook(1)] });
      expect(await store.destinations.disableWebhook(d.id, hook(1).url, 'first')).toBe(true);
      expect(await other.destinations.disableWebhook(d.id, hook(1).url, 'second')).toBe(true);
      expect((await store.destinations.get(d.id))?.webhooks[0].disabled?.reason).toBe('first');
      expect(await store.destinations.disableWebhook(d.id, hook(9).url, 'x')).toBe(false);
      expect(await store.destinations.disableWebhook(d.id, hook(1).url.toUpperCase(), 'x')).toBe(false);
      expect(await store.destinations.disableWebhook('dst_missing', hook(1).url, 'x')).toBe(false);
    });

    it('rotates the signing secret: the previous one signs until the overlap ends; the same secret changes nothing; none switches signing off', async () => {
      const source = await newSource();
      const d = await store.destinations.create(source.id, { enabled: true, signingSecret: 'whsec_A', webhooks: [hook(1)] });
      expect(d.signing).toEqual({ current: 'whsec_A' });
      const before = Date.now();
      const rotated = await store.destinations.update(d.id, { signingSecret: 'whsec_B', signingSecretOverlapMs: 60_000 });
      expect(rotated?.signing).toEqual({ current: 'whsec_B', previous: { secret: 'whsec_A', until: expect.any(String) } });
      const until = Date.parse(rotated!.signing!.previous!.until);
      expect(until).toBeGreaterThanOrEqual(before + 60_000);
      expect(until).toBeLessThan(Date.now() + 60_000 + 1_000);
      expect((await other.destinations.get(d.id))?.signing).toEqual(rotated?.signing);
      expect((await store.destinations.update(d.id, { signingSecret: 'whsec_B', signingSecretOverlapMs: 1 }))?.signing).toEqual(rotated?.signing);
      expect((await store.destinations.update(d.id, { signingSecret: 'whsec_C' }))?.signing).toEqual({ current: 'whsec_C' });
      expect((await store.destinations.update(d.id, { signingSecret: null }))?.signing).toBeNull();
    });

    it('listBySource in creation order; listEnabledIds and listEnabled only enabled ones with a URL switched on', async () => {
      const source = await newSource();
      const on = await store.destinations.create(source.id, { enabled: true, webhooks: [hook(1)] });
      await sleep(2);
      const off = await store.destinations.create(source.id, { enabled: false, webhooks: [hook(2)] });
      await sleep(2);
      const noUrl = await store.destinations.create(source.id, { enabled: true, webhooks: [] });
      await sleep(2);
      const allGone = await store.destinations.create(source.id, { enabled: true, webhooks: [hook(3)] });
      await store.destinations.disableWebhook(allGone.id, hook(3).url, 'gone');
      await sleep(2);
      const oneGone = await store.destinations.create(source.id, { enabled: true, webhooks: [hook(4), hook(5)] });
      await store.destinations.disableWebhook(oneGone.id, hook(4).url, 'gone');

      expect((await other.destinations.listBySource(source.id)).map((d) => d.id)).toEqual([on.id, off.id, noUrl.id, allGone.id, oneGone.id]);
      expect(await other.destinations.listEnabledIds(source.id)).toEqual([on.id, oneGone.id]);
      await store.destinations.update(off.id, { enabled: true });
      expect(await other.destinations.listEnabledIds(source.id)).toEqual([on.id, off.id, oneGone.id]);
      const consent = { categories: [], whenAbsent: 'deliver' };
      expect(await other.destinations.listEnabled(source.id)).toEqual([
        { id: on.id, webhookUrls: [hook(1).url], consent },
        { id: off.id, webhookUrls: [hook(2).url], consent },
        { id: oneGone.id, webhookUrls: [hook(4).url, hook(5).url], consent },
      ]);
      expect(await store.destinations.listEnabledIds('src_missing')).toEqual([]);
      // A function destination is listed with its function's id and display name (its integrations key), read in the same query.
      const fn = await store.functions.create({ resourceType: 'DESTINATION', displayName: 'Orders CRM (Acme)', description: null, logoUrl: null, settings: [], code: 'async function onTrack() {}' });
      const running = await store.destinations.create(source.id, { enabled: true, type: 'function', function: { functionId: fn.id, settings: {} }, webhooks: [] });
      expect((await other.destinations.listEnabled(source.id)).find((d) => d.id === running.id)).toEqual({ id: running.id, webhookUrls: [], consent, function: { functionId: fn.id, displayName: 'Orders CRM (Acme)' } });
    });

    it('listSourceIdsWithEnabled: each source with a deliverable destination once, sorted', async () => {
      const a = await newSource();
      const b = await newSource();
      const c = await newSource();
      await store.destinations.create(a.id, { enabled: true, webhooks: [hook(1)] });
      await store.destinations.create(a.id, { enabled: true, webhooks: [hook(2)] });
      await store.destinations.create(b.id, { enabled: false, webhooks: [hook(3)] });
      const cGone = await store.destinations.create(c.id, { enabled: true, webhooks: [hook(4)] });
      await store.destinations.disableWebhook(cGone.id, hook(4).url, 'gone');
      const ids = await other.destinations.listSourceIdsWithEnabled();
      expect(ids).toContain(a.id);
      expect(ids).not.toContain(b.id);
      expect(ids).not.toContain(c.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids).toEqual([...ids].sort());
    });

    it('deletes a destination with its switched-off webhooks; a second delete is false', async () => {
      const source = await newSource();
      const d = await store.destinations.create(source.id, { enabled: true, webhooks: [hook(1)] });
      await store.destinations.disableWebhook(d.id, hook(1).url, 'gone');
      expect(await store.destinations.delete(d.id)).toBe(true);
      expect(await other.destinations.delete(d.id)).toBe(false);
      expect(await other.destinations.get(d.id)).toBeUndefined();
      expect(await raw.selectFrom('disabled_webhooks').selectAll().where('destination_id', '=', d.id).execute()).toEqual([]);
    });
  });

  describe('destination consent', () => {
    it('keeps categories in order and whenAbsent; a patch changes only the fields it names', async () => {
      const source = await newSource();
      const d = await store.destinations.create(source.id, { enabled: true, consent: { categories: ['b', 'A', 'ü'] }, webhooks: [hook(1)] });
      expect((await other.destinations.get(d.id))!.consent).toEqual({ categories: ['b', 'A', 'ü'], whenAbsent: 'deliver' });
      await store.destinations.update(d.id, { consent: { whenAbsent: 'drop' } });
      expect((await other.destinations.get(d.id))!.consent).toEqual({ categories: ['b', 'A', 'ü'], whenAbsent: 'drop' });
      await store.destinations.update(d.id, { consent: { categories: [], whenAbsent: 'deliver' } });
      expect((await other.destinations.listBySource(source.id))[0].consent).toEqual({ categories: [], whenAbsent: 'deliver' });
    });
  });

  describe('suppressions', () => {
    it('suppressedAmong: ids suppressed now; lift ends it for new calls; of keeps every suppression, lifted ones too', async () => {
      const p = randomUUID();
      await store.suppressions.add([`${p}a`, `${p}b`, `${p}a`], '2026-01-01T00:00:00.000Z');
      expect(await other.suppressions.suppressedAmong([`${p}a`, `${p}A`, `${p}c`])).toEqual(new Set([`${p}a`]));
      expect(await other.suppressions.suppressedAmong([])).toEqual(new Set());
      await store.suppressions.lift([`${p}a`, `${p}c`], '2026-02-01T00:00:00.000Z');
      expect(await other.suppressions.suppressedAmong([`${p}a`, `${p}b`])).toEqual(new Set([`${p}b`]));
      expect(await other.suppressions.of([`${p}a`])).toEqual([{ suppressedAt: '2026-01-01T00:00:00.000Z', liftedAt: '2026-02-01T00:00:00.000Z' }]);
      expect(await other.suppressions.of([`${p}c`])).toEqual([]);
      // Suppressed again: a new suppression from then, not lifted.
      await store.suppressions.add([`${p}a`], '2026-03-01T00:00:00.000Z');
      expect(await other.suppressions.of([`${p}a`, `${p}b`])).toEqual(expect.arrayContaining([{ suppressedAt: '2026-03-01T00:00:00.000Z' }, { suppressedAt: '2026-01-01T00:00:00.000Z' }]));
      expect(await other.suppressions.suppressedAmong([`${p}a`])).toEqual(new Set([`${p}a`]));
    });
  });

  describe('regulations', () => {
    it('keeps a regulation as created; an unknown id is undefined', async () => {
      const regulation = await store.regulations.create({ regulationType: 'DELETE', subjectType: 'USER_ID', subjectIds: ['u1', 'U1', 'ü'] });
      expect(regulation).toEqual({ id: expect.stringMatching(/^reg_/), regulationType: 'DELETE', subjectType: 'USER_ID', subjectIds: ['u1', 'U1', 'ü'], createdAt: expect.any(String) });
      expect(await other.regulations.get(regulation.id)).toEqual(regulation);
      expect(await store.regulations.get('reg_missing')).toBeUndefined();
    });

    it('lists the latest regulations newest first, each with its type', async () => {
      const made = [];
      for (const regulationType of ['SUPPRESS_ONLY', 'UNSUPPRESS', 'SUPPRESS_WITH_DELETE'] as const) {
        made.push(await store.regulations.create({ regulationType, subjectType: 'USER_ID', subjectIds: [randomUUID()] }));
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      expect(await other.regulations.list(3)).toEqual([...made].reverse());
    });
  });

  describe('sourceUsers', () => {
    it('sourcesThatSaw: each source with the ids it saw, case-sensitive, in code-point order whatever the collation', async () => {
      const a = await newSource();
      const b = await newSource();
      const now = new Date().toISOString();
      const user = (s: string) => `${a.id}-${s}`;
      await writeTransaction(raw, (trx) => recordSeenUsers(trx, a.id, [{ userId: user('b'), linkedIds: [] }, { userId: user('B'), linkedIds: [] }, { userId: user('a'), linkedIds: [] }], now));
      await writeTransaction(raw, (trx) => recordSeenUsers(trx, b.id, [{ userId: user('a'), linkedIds: [] }], now));
      // Seen again: one row per source and user, not two.
      await writeTransaction(raw, (trx) => recordSeenUsers(trx, b.id, [{ userId: user('a'), linkedIds: [] }], now));

      const seen = await other.sourceUsers.sourcesThatSaw([user('a'), user('b'), user('B'), user('A'), user('nobody')]);
      expect(seen).toEqual(new Map([[a.id, [user('B'), user('a'), user('b')]], [b.id, [user('a')]]]));
      expect(await store.sourceUsers.sourcesThatSaw([])).toEqual(new Map());
    });

    it('linkedIds: the ids seen beside these users, without the users themselves; forget removes them as user and as linked id', async () => {
      const a = await newSource();
      const now = new Date().toISOString();
      const id = (s: string) => `${a.id}-${s}`;
      await recordSeenUsers(raw, a.id, [
        { userId: id('u1'), linkedIds: [id('anon1'), id('u2')] },
        { userId: id('u2'), linkedIds: [id('anon2')] },
        { userId: id('u3'), linkedIds: [id('u1')] },
      ], now);
      expect(await other.sourceUsers.linkedIds([id('u1'), id('u2')])).toEqual([id('anon1'), id('anon2')]);
      expect(await other.sourceUsers.linkedIds([id('U1')])).toEqual([]);

      await store.sourceUsers.forget([id('u1')]);
      expect(await other.sourceUsers.sourcesThatSaw([id('u1')])).toEqual(new Map());
      expect(await other.sourceUsers.linkedIds([id('u1')])).toEqual([]);
      // u3's link to u1 went with it; u2 stays.
      expect(await other.sourceUsers.linkedIds([id('u3')])).toEqual([]);
      expect(await other.sourceUsers.sourcesThatSaw([id('u2')])).toEqual(new Map([[a.id, [id('u2')]]]));
    });
  });

  describe('erasures', () => {
    it('erasedAt is the latest erasure of any of the ids; a later regulation moves an id\'s line', async () => {
      const p = randomUUID();
      await store.erasures.add([`${p}a`, `${p}b`, `${p}a`], '2026-01-01T00:00:00.000Z');
      await store.erasures.add([`${p}b`], '2026-02-01T00:00:00.000Z');
      expect(await other.erasures.erasedAt([`${p}a`])).toBe('2026-01-01T00:00:00.000Z');
      expect(await other.erasures.erasedAt([`${p}a`, `${p}b`, `${p}c`])).toBe('2026-02-01T00:00:00.000Z');
      expect(await other.erasures.erasedAt([`${p}A`])).toBeUndefined();
      expect(await other.erasures.erasedAt([`${p}c`])).toBeUndefined();
      expect(await other.erasures.erasedAt([])).toBeUndefined();
      await store.erasures.add([`${p}a`], '2026-03-01T00:00:00.000Z');
      expect(await other.erasures.erasedAt([`${p}a`])).toBe('2026-03-01T00:00:00.000Z');
    });
  });

  // Last: a keyed store hashes every plaintext regulation it finds when it opens.
  describe('with keys', () => {
    const keyring = parseKeyring(`k1=${Buffer.alloc(32, 9).toString('base64')}`);

    it('another process reads each destination by its own id, with a changed secret or header value at its next read', async () => {
      const writer = await dialect.open(keyring);
      const reader = await dialect.open(keyring);
      try {
        const source = (await writer.sources.create('credentials')).source;
        const one = await writer.destinations.create(source.id, { enabled: true, sharedSecret: 's1', webhooks: [{ url: hook('a').url, headers: { authorization: 'Bearer a1' } }] });
        const two = await writer.destinations.create(source.id, { enabled: true, sharedSecret: 't1', webhooks: [{ url: hook('b').url, headers: { authorization: 'Bearer b1' } }] });
        const seen = async (id: string) => {
          const destination = (await reader.destinations.get(id))!;
          return [destination.id, destination.sharedSecret, destination.webhooks[0].headers.authorization, destination.enabled];
        };
        expect(await seen(one.id)).toEqual([one.id, 's1', 'Bearer a1', true]);
        expect(await seen(two.id)).toEqual([two.id, 't1', 'Bearer b1', true]);
        await writer.destinations.update(one.id, { sharedSecret: 's2', webhooks: [{ url: hook('a').url, headers: { authorization: 'Bearer a2' } }] });
        expect(await seen(one.id)).toEqual([one.id, 's2', 'Bearer a2', true]);
        await writer.destinations.update(one.id, { enabled: false });
        expect(await seen(one.id)).toEqual([one.id, 's2', 'Bearer a2', false]);
        expect(await seen(two.id)).toEqual([two.id, 't1', 'Bearer b1', true]);
        expect(await writer.destinations.delete(two.id)).toBe(true);
        expect(await reader.destinations.get(two.id)).toBeUndefined();
      } finally {
        await writer.close();
        await reader.close();
      }
    });

    it('keeps a regulation\'s subject ids and erased ids as keyed hashes only', async () => {
      const keyed = await dialect.open(keyring);
      try {
        const ids = [`${randomUUID()} o"brien`, `${randomUUID()} zoë\\`];
        const regulation = await keyed.regulations.create({ regulationType: 'DELETE', subjectType: 'USER_ID', subjectIds: ids });
        expect(regulation.subjectIds).toEqual(ids.map((id) => identifierHash(keyring, 'userId', id)));
        expect(await keyed.regulations.get(regulation.id)).toEqual(regulation);
        await keyed.erasures.add(ids, '2026-04-01T00:00:00.000Z');
        expect(await keyed.erasures.erasedAt([ids[1]])).toBe('2026-04-01T00:00:00.000Z');
        const rows = JSON.stringify([
          await raw.selectFrom('regulations').selectAll().where('id', '=', regulation.id).execute(),
          await raw.selectFrom('erased_ids').selectAll().where('id_hash', 'in', ids.map((id) => identifierHash(keyring, 'erasedId', id))).execute(),
        ]);
        expect(rows).toContain('h1_');
        for (const id of ids) expect(rows).not.toContain(id.slice(0, 36));
      } finally {
        await keyed.close();
      }
    });

    it('hashes the records written before keys when a keyed process opens the store, and still honours their erasures', async () => {
      const subject = `${randomUUID()}-before-keys`;
      const linked = `${randomUUID()}-linked-device`;
      const before = await store.regulations.create({ regulationType: 'DELETE', subjectType: 'USER_ID', subjectIds: [subject] });
      expect(before.subjectIds).toEqual([subject]);
      await store.erasures.add([subject, linked], '2026-05-01T00:00:00.000Z');

      const keyed = await dialect.open(keyring);
      try {
        expect((await keyed.regulations.get(before.id))?.subjectIds).toEqual([identifierHash(keyring, 'userId', subject)]);
        const record = await raw.selectFrom('regulations').selectAll().where('id', '=', before.id).executeTakeFirstOrThrow();
        expect(record.subject_ids).not.toContain(subject);
        // The subject's erasure moved to the keyed hash; the linked id's (never recorded in plaintext) is still found.
        expect(await keyed.erasures.erasedAt([subject])).toBe('2026-05-01T00:00:00.000Z');
        expect(await keyed.erasures.erasedAt([linked])).toBe('2026-05-01T00:00:00.000Z');
        expect(await raw.selectFrom('erased_ids').select('erased_at').where('id_hash', '=', identifierHash(keyring, 'erasedId', subject)).execute()).toEqual([{ erased_at: '2026-05-01T00:00:00.000Z' }]);
        expect(await store.erasures.erasedAt([subject])).toBeUndefined();
        // A second keyed process finds nothing left to do.
        const again = await dialect.open(keyring);
        await again.close();
        expect((await keyed.regulations.get(before.id))?.subjectIds).toEqual([identifierHash(keyring, 'userId', subject)]);
      } finally {
        await keyed.close();
      }
    });
  });

  // Crypto-shredding.
  describe('data keys', () => {
    const keyA = Buffer.alloc(32, 9).toString('base64');
    const keyB = Buffer.alloc(32, 7).toString('base64');

    it('getOrCreate gives two processes asking at once the same key; destroy erases it and a later getOrCreate makes a new one', async () => {
      const keyring = parseKeyring(`k1=${keyA}`);
      const one = await dialect.open(keyring);
      const two = await dialect.open(keyring);
      try {
        const s1 = identifierHash(keyring, 'userId', `${randomUUID()} zoë`);
        const s2 = identifierHash(keyring, 'anonymousId', randomUUID());
        const [a, b] = await Promise.all([one.dataKeys.getOrCreate([s1, s2, s1]), two.dataKeys.getOrCreate([s1])]);
        expect(a.get(s1)!.equals(b.get(s1)!)).toBe(true);
        expect(a.get(s1)!.equals(a.get(s2)!)).toBe(false);
        expect((await two.dataKeys.get(s2))!.equals(a.get(s2)!)).toBe(true);
        // Stored wrapped: the row never holds the key's bytes.
        const rows = await raw.selectFrom('data_keys').selectAll().where('subject_hash', 'in', [s1, s2]).execute();
        expect(rows.map((r) => r.master_key_id)).toEqual(['k1', 'k1']);
        for (const row of rows) expect(Buffer.from(row.wrapped_key, 'base64').includes(a.get(row.subject_hash)!)).toBe(false);

        expect(await one.dataKeys.destroy([s1, s1])).toBe(1);
        expect(await two.dataKeys.get(s1)).toBeUndefined();
        expect(await one.dataKeys.destroy([s1])).toBe(0);
        const renewed = await two.dataKeys.getOrCreate([s1]);
        expect(renewed.get(s1)!.equals(a.get(s1)!)).toBe(false);
        expect((await one.dataKeys.get(s2))!.equals(a.get(s2)!)).toBe(true);
      } finally {
        await one.close();
        await two.close();
      }
    });

    it('keeps unwrapping after rotation; new keys are wrapped under the new active key', async () => {
      const before = parseKeyring(`k1=${keyA}`);
      const after = parseKeyring(`k1=${keyA},k2=${keyB}`, 'k2');
      const old = await dialect.open(before);
      const rotated = await dialect.open(after);
      try {
        const s1 = identifierHash(before, 'userId', randomUUID());
        const s2 = identifierHash(before, 'userId', randomUUID());
        const key = (await old.dataKeys.getOrCreate([s1])).get(s1)!;
        expect((await rotated.dataKeys.get(s1))!.equals(key)).toBe(true);
        await rotated.dataKeys.getOrCreate([s2]);
        expect(await raw.selectFrom('data_keys').select('master_key_id').where('subject_hash', '=', s2).executeTakeFirstOrThrow()).toEqual({ master_key_id: 'k2' });
      } finally {
        await old.close();
        await rotated.close();
      }
    });

    it('re-wraps keys made under a retired master key with the active one: the same keys, and k1 can go', async () => {
      const before = parseKeyring(`k1=${keyA}`);
      const after = parseKeyring(`k1=${keyA},k2=${keyB}`, 'k2');
      const old = await dialect.open(before);
      const rotated = await dialect.open(after);
      let retired: Store | undefined;
      try {
        const subjects = Array.from({ length: 5 }, () => identifierHash(before, 'userId', randomUUID()));
        const keys = await old.dataKeys.getOrCreate(subjects);
        // A regulation destroys one before the re-wrap: it must not come back.
        await old.dataKeys.destroy([subjects[4]]);
        const k1Before = (await rotated.dataKeys.countByMasterKey()).k1;
        expect(k1Before).toBeGreaterThanOrEqual(4);
        let total = 0;
        for (let left = true; left; ) {
          const step = await rotated.dataKeys.rewrap(2);
          total += step.rewrapped;
          left = step.left;
        }
        expect(total).toBe(k1Before);
        expect((await rotated.dataKeys.countByMasterKey()).k1).toBeUndefined();
        // Only k2 listed now: every key unwraps, unchanged; the destroyed one stays destroyed.
        retired = await dialect.open(parseKeyring(`k2=${keyB}`));
        for (const subject of subjects.slice(0, 4)) expect((await retired.dataKeys.get(subject))!.equals(keys.get(subject)!)).toBe(true);
        expect(await retired.dataKeys.get(subjects[4])).toBeUndefined();
        expect(await old.dataKeys.get(subjects[0]).catch((err: Error) => err.message)).toBe('data key wrapped with master key "k2", which is not listed in PAYLOAD_KEYS');
      } finally {
        await old.close();
        await rotated.close();
        await retired?.close();
      }
    });
  });

  describe('flow control', () => {
    it('keeps a rate limit and a pause on the destination; pausing again keeps when the hold began', async () => {
      const source = await newSource();
      const d = await store.destinations.create(source.id, { enabled: true, maxRequestsPerSecond: 5, webhooks: [hook(1)] });
      expect(d).toMatchObject({ maxRequestsPerSecond: 5, paused: false });
      const paused = await store.destinations.update(d.id, { paused: true });
      expect(paused).toMatchObject({ paused: true, pausedAt: expect.any(String) });
      expect((await other.destinations.update(d.id, { paused: true }))?.pausedAt).toBe(paused?.pausedAt);
      expect(await other.destinations.get(d.id)).toMatchObject({ paused: true, maxRequestsPerSecond: 5 });
      const resumed = await store.destinations.update(d.id, { paused: false, maxRequestsPerSecond: null });
      expect(resumed).toMatchObject({ paused: false, maxRequestsPerSecond: null });
      expect(resumed).not.toHaveProperty('pausedAt');
    });

    it('hands two processes asking at once distinct slots one interval apart, none past the hold left, as waits from the store\'s now', async () => {
      const source = await newSource();
      const d = await store.destinations.create(source.id, { enabled: true, maxRequestsPerSecond: 5, webhooks: [hook(1)] });
      // Concurrent writers on two handles where the dialect allows it in one process (see concurrentHandles).
      const handles = dialect.concurrentHandles > 1 ? [store, other] : [store];
      const asked = Date.now();
      const slots = await Promise.all(Array.from({ length: 10 }, (_, i) => handles[i % handles.length].flowControl.reserveSlot(d.id, 200_000, 1_500_000)));
      const elapsedUs = (Date.now() - asked) * 1_000;
      const taken = slots.filter((s) => s.reserved).sort((a, b) => a.slotUs - b.slotUs);
      // Eight fit in the 1.5 s left when all ask in the same millisecond; asks spread over `elapsed` may fit more.
      expect(taken.length).toBeGreaterThanOrEqual(8);
      expect(taken.map((s) => s.slotUs - taken[0].slotUs)).toEqual(taken.map((_s, i) => i * 200_000));
      // Each wait is its slot's distance from the store's now when it asked: never past the hold left.
      // An ask that queued on the row lock behind another counts from up to `elapsed` later or earlier.
      taken.forEach((s, i) => {
        expect(s.waitUs).toBeLessThanOrEqual(Math.min(i * 200_000 + elapsedUs, 1_500_000));
        expect(s.waitUs).toBeGreaterThanOrEqual(Math.max(0, i * 200_000 - elapsedUs - 1_000));
      });
      const refused = slots.filter((s) => !s.reserved);
      for (const s of refused) {
        // The next free slot when it asked: after the eight that fit at once, and no later than after
        // every slot taken (an ask refused before a later ask, at a later now, took that slot).
        const after = (s.slotUs - taken[0].slotUs) / 200_000;
        expect(Number.isInteger(after) && after >= 8 && after <= taken.length).toBe(true);
        // Refused at one now, answered from the next statement's: the slot was past the hold when
        // refused, and the wait counts from the read, up to `elapsed` later (a loaded box saw 1,476 ms).
        expect(s.waitUs).toBeGreaterThan(1_500_000 - elapsedUs);
      }
      // At send time: one request per interval, whoever asks.
      expect(await store.flowControl.claimSend(d.id, 200_000)).toMatchObject({ claimed: true, waitUs: 0 });
      const wait = await other.flowControl.claimSend(d.id, 200_000);
      expect(wait.claimed).toBe(false);
      expect(wait.waitUs).toBeGreaterThan(0);
      expect(wait.waitUs).toBeLessThanOrEqual(200_000);
      await new Promise((resolve) => setTimeout(resolve, wait.waitUs / 1_000 + 5));
      expect(await other.flowControl.claimSend(d.id, 200_000)).toMatchObject({ claimed: true, waitUs: 0 });
    });

    it('restarts the limiter\'s queue when maxRequestsPerSecond changes: the next slot is now again', async () => {
      const source = await newSource();
      const d = await store.destinations.create(source.id, { enabled: true, maxRequestsPerSecond: 1, webhooks: [hook(1)] });
      for (let i = 0; i < 5; i++) await store.flowControl.reserveSlot(d.id, 1_000_000, 60_000_000);
      expect((await store.flowControl.reserveSlot(d.id, 1_000_000, 60_000_000)).waitUs).toBeGreaterThan(4_000_000);
      await other.destinations.update(d.id, { maxRequestsPerSecond: 10 });
      expect((await store.flowControl.reserveSlot(d.id, 100_000, 60_000_000)).waitUs).toBeLessThanOrEqual(100_000);
    });

    it('keeps the later backpressure of a URL, shows it on the destination, clears it, and forgets it with the destination', async () => {
      const source = await newSource();
      const d = await store.destinations.create(source.id, { enabled: true, webhooks: [hook(1), hook(2)] });
      const first = await store.flowControl.backpressure(d.id, hook(1).url, 5_000, 'HTTP 429 with Retry-After');
      expect(first?.leftMs).toBeGreaterThan(4_000);
      expect(first?.leftMs).toBeLessThanOrEqual(5_000);
      // A shorter pause asked later keeps the longer one, and says so.
      expect(await other.flowControl.backpressure(d.id, hook(1).url, 1_000, 'HTTP 503 with Retry-After')).toEqual({ untilMs: first!.untilMs, leftMs: expect.any(Number) });
      const read = await other.destinations.get(d.id);
      expect(read?.webhooks[0].backpressure).toEqual({ untilMs: first!.untilMs, reason: 'HTTP 429 with Retry-After' });
      expect(read?.webhooks[1]).not.toHaveProperty('backpressure');
      expect((await store.destinations.listBySource(source.id))[0].webhooks[0].backpressure?.untilMs).toBe(first!.untilMs);
      expect(await other.flowControl.backpressureLeft(d.id, hook(1).url)).toEqual({ untilMs: first!.untilMs, leftMs: expect.any(Number) });
      expect(await other.flowControl.backpressureLeft(d.id, hook(2).url)).toBeUndefined();
      expect(await store.flowControl.clearBackpressure(d.id, hook(1).url)).toBe(true);
      expect(await other.flowControl.backpressureLeft(d.id, hook(1).url)).toBeUndefined();
      expect((await other.destinations.get(d.id))?.webhooks[0]).not.toHaveProperty('backpressure');
      expect(await store.flowControl.clearBackpressure(d.id, hook(1).url)).toBe(false);
      await store.flowControl.backpressure(d.id, hook(1).url, 5_000, 'HTTP 429 with Retry-After');
      await store.destinations.delete(d.id);
      await expect(store.flowControl.backpressure(d.id, hook(1).url, 5_000, 'late')).resolves.toBeUndefined();
    });
  });

  describe('two processes on one database', () => {
    it('each sees the other\'s writes at once: create, switch off, rotate, delete', async () => {
      const source = await newSource();
      const d = await store.destinations.create(source.id, { enabled: true, sharedSecret: 'one', webhooks: [hook(1)] });
      expect((await other.destinations.get(d.id))?.sharedSecret).toBe('one');
      await store.destinations.update(d.id, { enabled: false, sharedSecret: 'two' });
      expect(await other.destinations.get(d.id)).toMatchObject({ enabled: false, sharedSecret: 'two' });
      await other.destinations.disableWebhook(d.id, hook(1).url, 'gone');
      expect((await store.destinations.get(d.id))?.webhooks[0].disabled?.reason).toBe('gone');
      await other.destinations.delete(d.id);
      expect(await store.destinations.get(d.id)).toBeUndefined();
    });

    it('runs write transactions one at a time: 12 read-then-write increments at once, none lost, none overlapping', async () => {
      const table = `counter_${randomUUID().replace(/-/g, '').slice(0, 8)}`;
      await sql`create table ${sql.table(table)} (n integer not null)`.execute(raw);
      await sql`insert into ${sql.table(table)} (n) values (0)`.execute(raw);
      const handles = [raw, ...Array.from({ length: dialect.concurrentHandles - 1 }, () => dialect.raw())];
      const spans: [number, number][] = [];
      await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          writeTransaction(handles[i % handles.length], async (trx) => {
            const started = performance.now();
            const { rows } = await sql<{ n: number }>`select n from ${sql.table(table)}`.execute(trx);
            await sleep(10);
            await sql`update ${sql.table(table)} set n = ${Number(rows[0].n) + 1}`.execute(trx);
            spans.push([started, performance.now()]);
          }),
        ),
      );
      const { rows } = await sql<{ n: number }>`select n from ${sql.table(table)}`.execute(raw);
      expect(Number(rows[0].n)).toBe(12);
      spans.sort((x, y) => x[0] - y[0]);
      for (let i = 1; i < spans.length; i++) expect(spans[i][0]).toBeGreaterThanOrEqual(spans[i - 1][1]);
    });
  });
});
