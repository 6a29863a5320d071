import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import Fastify, { type FastifyInstance } from 'fastify';
import { adminRoutes } from '../../src/api/admin';
import { installErrorHandler } from '../../src/api/errors';
import { openStore, type Store } from '../../src/store';
import { hashWriteKey } from '../../src/store/write-keys';
import { ADMIN_TOKEN, auth, buildAdminApp, noDeliveries, policy } from '../helpers/admin-app';

/** Everything SQLite has written for the store: WAL mode keeps recent pages in the -wal file. */
function databaseBytes(databasePath: string): Buffer {
  const files = [databasePath, `${databasePath}-wal`].filter(existsSync);
  return Buffer.concat(files.map((file) => readFileSync(file)));
}

let dir: string;
let databasePath: string;
let store: Store;
let app: FastifyInstance;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-admin-'));
  databasePath = path.join(dir, 'switchyard.db');
  store = await openStore({ databasePath });
  app = await buildAdminApp(store);
});

afterAll(async () => {
  await app?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function createSource(name = 'web') {
  const res = await app.inject({ method: 'POST', url: '/admin/sources', headers: auth, payload: { name } });
  expect(res.statusCode).toBe(201);
  return res.json<{ id: string; name: string; writeKey: string; writeKeyHint: string; createdAt: string }>();
}

async function createDestination(sourceId: string, payload: object) {
  return app.inject({ method: 'POST', url: `/admin/sources/${sourceId}/destinations`, headers: auth, payload });
}

const webhooks = (n: number, url = 'https://example.com/hook') => Array.from({ length: n }, (_, i) => ({ url: `${url}/${i}` }));
const headers = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`X-H${i}`, `value-${i}`]));

describe('admin authentication', () => {
  it('answers 401 without an Authorization header', async () => {
    const res = await app.inject({ method: 'GET', url: '/admin/sources' });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ code: 'unauthorized', message: expect.stringContaining('Bearer') });
    expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
  });

  it('answers 401 with a wrong token, without repeating it', async () => {
    const res = await app.inject({ method: 'GET', url: '/admin/sources', headers: { authorization: 'Bearer not-the-token-xyz' } });
    expect(res.statusCode).toBe(401);
    expect(res.json().code).toBe('unauthorized');
    expect(res.body).not.toContain('not-the-token-xyz');
  });

  it('answers 401 to the right token under another scheme', async () => {
    const res = await app.inject({ method: 'GET', url: '/admin/sources', headers: { authorization: `Basic ${ADMIN_TOKEN}` } });
    expect(res.statusCode).toBe(401);
  });

  it('answers 401 before validating the body', async () => {
    const res = await app.inject({ method: 'POST', url: '/admin/sources', payload: { name: '' } });
    expect(res.statusCode).toBe(401);
  });

  it('locks the admin API when no token is configured', async () => {
    const locked = Fastify({ logger: false });
    installErrorHandler(locked);
    await locked.register(adminRoutes, { prefix: '/admin', store, deliveries: noDeliveries, adminToken: '', policy, keyring: undefined });
    const res = await locked.inject({ method: 'GET', url: '/admin/sources', headers: { authorization: 'Bearer ' } });
    expect(res.statusCode).toBe(401);
    await locked.close();
  });
});

describe('sources', () => {
  it('creates a source and shows its write key only in the creation reply', async () => {
    const created = await createSource('Marketing site');
    expect(created).toEqual({
      id: expect.stringMatching(/^src_[0-9a-f]{32}$/),
      name: 'Marketing site',
      labels: [],
      writeKey: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/),
      writeKeyHint: created.writeKey.slice(-4),
      createdAt: expect.any(String),
    });

    const one = await app.inject({ method: 'GET', url: `/admin/sources/${created.id}`, headers: auth });
    expect(one.statusCode).toBe(200);
    expect(one.json()).toEqual({ id: created.id, name: 'Marketing site', labels: [], writeKeyHint: created.writeKeyHint, createdAt: created.createdAt });
    expect(one.body).not.toContain(created.writeKey);

    const list = await app.inject({ method: 'GET', url: '/admin/sources', headers: auth });
    expect(list.statusCode).toBe(200);
    expect(list.json().sources).toContainEqual(one.json());
    expect(list.body).not.toContain(created.writeKey);
    expect(list.body).not.toContain('writeKey"');
  });

  it('finds the source by its write key, and by nothing else', async () => {
    const created = await createSource();
    expect((await store.sources.findByWriteKey(created.writeKey))?.id).toBe(created.id);
    // One character changed (a key that ends in x changes to y: 1 in 64 keys made this test pass its own key).
    const changed = `${created.writeKey.slice(0, -1)}${created.writeKey.endsWith('x') ? 'y' : 'x'}`;
    expect(await store.sources.findByWriteKey(changed)).toBeUndefined();
    expect(await store.sources.findByWriteKey('')).toBeUndefined();
  });

  it('keeps only a hash of the write key in the database file', async () => {
    const created = await createSource('hash check');
    const bytes = databaseBytes(databasePath);
    // The search itself works: the digest of the key is there…
    expect(bytes.includes(hashWriteKey(created.writeKey))).toBe(true);
    // …and the key is not.
    expect(bytes.includes(created.writeKey)).toBe(false);
  });

  it('deletes a source, then answers 404 for it', async () => {
    const created = await createSource('short-lived');
    const del = await app.inject({ method: 'DELETE', url: `/admin/sources/${created.id}`, headers: auth });
    expect(del.statusCode).toBe(204);
    expect(del.body).toBe('');

    const get = await app.inject({ method: 'GET', url: `/admin/sources/${created.id}`, headers: auth });
    expect(get.statusCode).toBe(404);
    expect(get.json()).toEqual({ code: 'not_found', message: `source ${created.id} not found` });

    const again = await app.inject({ method: 'DELETE', url: `/admin/sources/${created.id}`, headers: auth });
    expect(again.statusCode).toBe(404);
    expect(await store.sources.findByWriteKey(created.writeKey)).toBeUndefined();
  });

  it.each([
    [{}, 'name: is required (or slug, which then names the source)'],
    [{ name: '' }, 'name: must NOT have fewer than 1 characters'],
    [{ name: 'x'.repeat(201) }, 'name: must NOT have more than 200 characters'],
    [{ name: 42 }, 'name: must be string'],
  ])('rejects %j with a message naming the field', async (payload, message) => {
    const res = await app.inject({ method: 'POST', url: '/admin/sources', headers: auth, payload });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ code: 'invalid_request', message });
  });
});

describe('destinations', () => {
  it('creates, reads, patches, switches off and on, and deletes a destination', async () => {
    const source = await createSource('app');
    const created = await createDestination(source.id, {
      name: 'CRM',
      enabled: true,
      sharedSecret: 'shh-its-a-secret',
      webhooks: [{ url: 'https://crm.example.com/in', headers: { 'X-Api-Key': 'header-value-1' } }, { url: 'http://backup.example.com/' }],
    });
    expect(created.statusCode).toBe(201);
    const destination = created.json();
    expect(destination).toEqual({
      id: expect.stringMatching(/^dst_[0-9a-f]{32}$/),
      sourceId: source.id,
      name: 'CRM',
      enabled: true,
      sharedSecretSet: true,
      signingSecretSet: false,
      webhooks: [
        { url: 'https://crm.example.com/in', headerNames: ['X-Api-Key'] },
        { url: 'http://backup.example.com/', headerNames: [] },
      ],
      maxRequestsPerSecond: null,
      paused: false,
      propagateTraceContext: true,
      consent: { categories: [], whenAbsent: 'deliver' },
      type: 'webhooks',
      tlsSet: false,
      createdAt: expect.any(String),
      updatedAt: destination.createdAt,
    });
    expect(await store.destinations.listEnabledIds(source.id)).toEqual([destination.id]);

    const get = await app.inject({ method: 'GET', url: `/admin/destinations/${destination.id}`, headers: auth });
    expect(get.json()).toEqual(destination);

    const list = await app.inject({ method: 'GET', url: `/admin/sources/${source.id}/destinations`, headers: auth });
    expect(list.json()).toEqual({ destinations: [destination] });

    const off = await app.inject({ method: 'PATCH', url: `/admin/destinations/${destination.id}`, headers: auth, payload: { enabled: false } });
    expect(off.statusCode).toBe(200);
    expect(off.json()).toMatchObject({ enabled: false, name: 'CRM', sharedSecretSet: true, webhooks: destination.webhooks });
    expect(await store.destinations.listEnabledIds(source.id)).toEqual([]);

    const on = await app.inject({ method: 'PATCH', url: `/admin/destinations/${destination.id}`, headers: auth, payload: { enabled: true } });
    expect(on.json().enabled).toBe(true);
    expect(await store.destinations.listEnabledIds(source.id)).toEqual([destination.id]);

    const patched = await app.inject({
      method: 'PATCH',
      url: `/admin/destinations/${destination.id}`,
      headers: auth,
      payload: { name: 'CRM v2', sharedSecret: null, webhooks: [{ url: 'https://v2.example.com/in' }] },
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({
      name: 'CRM v2',
      enabled: true,
      sharedSecretSet: false,
      webhooks: [{ url: 'https://v2.example.com/in', headerNames: [] }],
    });
    expect((await store.destinations.get(destination.id))?.sharedSecret).toBeNull();

    const del = await app.inject({ method: 'DELETE', url: `/admin/destinations/${destination.id}`, headers: auth });
    expect(del.statusCode).toBe(204);
    const gone = await app.inject({ method: 'GET', url: `/admin/destinations/${destination.id}`, headers: auth });
    expect(gone.statusCode).toBe(404);
    expect(gone.json().code).toBe('not_found');
  });

  it('keeps the shared secret and header values for delivery but never shows them', async () => {
    const source = await createSource();
    const secret = 'very-secret-signing-key';
    const headerValue = 'Bearer downstream-credential';
    const created = await createDestination(source.id, {
      enabled: true,
      sharedSecret: secret,
      webhooks: [{ url: 'https://example.com/hook', headers: { Authorization: headerValue, 'X-Tenant': 'tenant-value' } }],
    });
    const id = created.json().id;
    const replies = [
      created,
      await app.inject({ method: 'GET', url: `/admin/destinations/${id}`, headers: auth }),
      await app.inject({ method: 'GET', url: `/admin/sources/${source.id}/destinations`, headers: auth }),
      await app.inject({ method: 'PATCH', url: `/admin/destinations/${id}`, headers: auth, payload: { name: 'renamed' } }),
    ];
    for (const reply of replies) {
      expect(reply.statusCode).toBeLessThan(300);
      expect(reply.body).not.toContain(secret);
      expect(reply.body).not.toContain(headerValue);
      expect(reply.body).not.toContain('tenant-value');
      expect(reply.body).toContain('"headerNames":["Authorization","X-Tenant"]');
    }

    const stored = await store.destinations.get(id);
    expect(stored?.sharedSecret).toBe(secret);
    expect(stored?.webhooks[0].headers).toEqual({ Authorization: headerValue, 'X-Tenant': 'tenant-value' });
  });

  it('defaults the name, and accepts a destination with no webhooks that receives nothing', async () => {
    const source = await createSource();
    const res = await createDestination(source.id, { enabled: true, webhooks: [] });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ name: 'Webhooks', sharedSecretSet: false, webhooks: [] });
    expect(await store.destinations.listEnabledIds(source.id)).toEqual([]);
  });

  it('keeps propagateTraceContext as given: default true, false on create, changed by PATCH, a non-boolean refused naming the field', async () => {
    const source = await createSource();
    const created = await createDestination(source.id, { enabled: true, propagateTraceContext: false, webhooks: webhooks(1) });
    expect(created.json()).toMatchObject({ propagateTraceContext: false });
    expect((await store.destinations.get(created.json().id))?.propagateTraceContext).toBe(false);
    const id = created.json().id as string;
    const on = await app.inject({ method: 'PATCH', url: `/admin/destinations/${id}`, headers: auth, payload: { propagateTraceContext: true } });
    expect(on.json()).toMatchObject({ propagateTraceContext: true });
    const named = await app.inject({ method: 'PATCH', url: `/admin/destinations/${id}`, headers: auth, payload: { name: 'renamed' } });
    expect(named.json()).toMatchObject({ propagateTraceContext: true });
    const refused = await app.inject({ method: 'PATCH', url: `/admin/destinations/${id}`, headers: auth, payload: { propagateTraceContext: 'no' } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().message).toContain('propagateTraceContext');
  });

  it('treats an empty shared secret as none (seed: no X-Signature when empty)', async () => {
    const source = await createSource();
    const res = await createDestination(source.id, { enabled: true, sharedSecret: '', webhooks: webhooks(1) });
    expect(res.json().sharedSecretSet).toBe(false);
    expect((await store.destinations.get(res.json().id))?.sharedSecret).toBeNull();
  });

  it('answers 404 for destinations of an unknown source', async () => {
    const create = await createDestination('src_missing', { enabled: true, webhooks: webhooks(1) });
    expect(create.statusCode).toBe(404);
    expect(create.json()).toEqual({ code: 'not_found', message: 'source src_missing not found' });
    const list = await app.inject({ method: 'GET', url: '/admin/sources/src_missing/destinations', headers: auth });
    expect(list.statusCode).toBe(404);
  });

  it('answers 404 when patching or deleting an unknown destination', async () => {
    const patch = await app.inject({ method: 'PATCH', url: '/admin/destinations/dst_missing', headers: auth, payload: { enabled: true } });
    expect(patch.statusCode).toBe(404);
    const del = await app.inject({ method: 'DELETE', url: '/admin/destinations/dst_missing', headers: auth });
    expect(del.statusCode).toBe(404);
  });

  it('sets a rate limit and a hold on create and PATCH, shows them, and clears them', async () => {
    const source = await createSource();
    const created = await createDestination(source.id, { enabled: true, maxRequestsPerSecond: 5, paused: true, webhooks: webhooks(1) });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({ maxRequestsPerSecond: 5, paused: true, pausedAt: expect.stringMatching(/^\d{4}-/) });
    const id = created.json().id;
    const patch = (payload: object) => app.inject({ method: 'PATCH', url: `/admin/destinations/${id}`, headers: auth, payload });

    const pausedAgain = await patch({ paused: true });
    expect(pausedAgain.json().pausedAt).toBe(created.json().pausedAt);
    const resumed = await patch({ paused: false, maxRequestsPerSecond: null });
    expect(resumed.statusCode).toBe(200);
    expect(resumed.json()).toMatchObject({ paused: false, maxRequestsPerSecond: null });
    expect(resumed.json()).not.toHaveProperty('pausedAt');
    expect((await patch({ maxRequestsPerSecond: 250 })).json()).toMatchObject({ maxRequestsPerSecond: 250, paused: false });
    const read = await app.inject({ method: 'GET', url: `/admin/destinations/${id}`, headers: auth });
    expect(read.json()).toMatchObject({ maxRequestsPerSecond: 250, paused: false });
  });

  it('sets consent categories on create, changes one field with PATCH keeping the other, and shows them', async () => {
    const source = await createSource();
    const created = await createDestination(source.id, { enabled: true, consent: { categories: ['advertising', 'analytics'] }, webhooks: webhooks(1) });
    expect(created.statusCode).toBe(201);
    expect(created.json().consent).toEqual({ categories: ['advertising', 'analytics'], whenAbsent: 'deliver' });
    const id = created.json().id;
    const patch = (payload: object) => app.inject({ method: 'PATCH', url: `/admin/destinations/${id}`, headers: auth, payload });

    expect((await patch({ consent: { whenAbsent: 'drop' } })).json().consent).toEqual({ categories: ['advertising', 'analytics'], whenAbsent: 'drop' });
    expect((await patch({ name: 'renamed' })).json().consent).toEqual({ categories: ['advertising', 'analytics'], whenAbsent: 'drop' });
    expect((await patch({ consent: { categories: [] } })).json().consent).toEqual({ categories: [], whenAbsent: 'drop' });
    const read = await app.inject({ method: 'GET', url: `/admin/destinations/${id}`, headers: auth });
    expect(read.json().consent).toEqual({ categories: [], whenAbsent: 'drop' });
    expect((await store.destinations.get(id))!.consent).toEqual({ categories: [], whenAbsent: 'drop' });
    const listed = await app.inject({ method: 'GET', url: `/admin/sources/${source.id}/destinations`, headers: auth });
    expect(listed.json().destinations[0].consent).toEqual({ categories: [], whenAbsent: 'drop' });
    // Twenty categories of 100 characters are the most one destination takes.
    const most = Array.from({ length: 20 }, (_, i) => `${i}`.padEnd(100, 'c'));
    expect((await patch({ consent: { categories: most } })).json().consent.categories).toEqual(most);
  });

  it.each([
    [{ maxRequestsPerSecond: 0 }, 'maxRequestsPerSecond: must be >= 1'],
    [{ maxRequestsPerSecond: 10_001 }, 'maxRequestsPerSecond: must be <= 10000'],
    [{ maxRequestsPerSecond: 2.5 }, 'maxRequestsPerSecond: must be integer'],
    [{ maxRequestsPerSecond: 'fast' }, 'maxRequestsPerSecond: must be integer'],
    [{ paused: 'yes' }, 'paused: must be boolean'],
    // Consent settings.
    [{ consent: { categories: Array.from({ length: 21 }, (_, i) => `c${i}`) } }, 'consent.categories: must NOT have more than 20 items'],
    [{ consent: { categories: [''] } }, 'consent.categories[0]: must NOT have fewer than 1 characters'],
    [{ consent: { categories: ['ok', 'c'.repeat(101)] } }, 'consent.categories[1]: must NOT have more than 100 characters'],
    [{ consent: { categories: [7] } }, 'consent.categories[0]: must be string'],
    [{ consent: { whenAbsent: 'allow' } }, 'consent.whenAbsent: must be equal to one of the allowed values: deliver, drop'],
    [{ consent: { purposes: ['ads'] } }, 'consent.purposes: is not a known field'],
    [{ consent: ['analytics'] }, 'consent: must be object'],
  ])('refuses %j with a 400 naming the field and the rule', async (body, message) => {
    const source = await createSource();
    const created = await createDestination(source.id, { enabled: true, webhooks: webhooks(1), ...body });
    expect(created.statusCode).toBe(400);
    expect(created.json()).toEqual({ code: 'invalid_request', message });
    const id = (await createDestination(source.id, { enabled: true, webhooks: webhooks(1) })).json().id;
    const patched = await app.inject({ method: 'PATCH', url: `/admin/destinations/${id}`, headers: auth, payload: body });
    expect(patched.json()).toEqual({ code: 'invalid_request', message });
  });

  it('deletes the destinations of a deleted source', async () => {
    const source = await createSource();
    const destination = (await createDestination(source.id, { enabled: true, webhooks: webhooks(1) })).json();
    await app.inject({ method: 'DELETE', url: `/admin/sources/${source.id}`, headers: auth });
    expect(await store.destinations.get(destination.id)).toBeUndefined();
    const get = await app.inject({ method: 'GET', url: `/admin/destinations/${destination.id}`, headers: auth });
    expect(get.statusCode).toBe(404);
  });

  describe('seed rules', () => {
    let sourceId: string;
    beforeAll(async () => {
      sourceId = (await createSource('rules')).id;
    });

    it.each([
      ['6 webhook URLs', { enabled: true, webhooks: webhooks(6) }, 'webhooks: at most 5 webhook URLs per destination'],
      [
        '6 headers on one webhook',
        { enabled: true, webhooks: [{ url: 'https://example.com', headers: headers(6) }] },
        'webhooks[0].headers: at most 5 static headers per webhook',
      ],
      ['an ftp:// URL', { enabled: true, webhooks: [{ url: 'ftp://example.com/in' }] }, 'webhooks[0].url: must use the http or https scheme, not ftp'],
      [
        'a relative URL',
        { enabled: true, webhooks: [{ url: 'https://ok.example.com' }, { url: '/hooks/in' }] },
        'webhooks[1].url: must be a full URL including the http or https scheme',
      ],
      [
        'credentials in the URL',
        { enabled: true, webhooks: [{ url: 'https://user:pass@example.com/in' }] },
        'webhooks[0].url: must not embed credentials (user:password@); use a static header instead',
      ],
      [
        'an invalid header name',
        { enabled: true, webhooks: [{ url: 'https://example.com', headers: { 'Bad Name': 'x' } }] },
        'webhooks[0].headers: "Bad Name" is not a valid HTTP header name',
      ],
      [
        'a header value with CR/LF',
        { enabled: true, webhooks: [{ url: 'https://example.com', headers: { 'X-Key': 'v\r\nHost: evil' } }] },
        'webhooks[0].headers.X-Key: must not contain CR, LF or NUL characters',
      ],
      [
        'an override of X-Signature',
        { enabled: true, webhooks: [{ url: 'https://example.com', headers: { 'x-signature': 'forged' } }] },
        'webhooks[0].headers: "x-signature" is set by Switchyard and cannot be overridden',
      ],
      [
        'an override of Content-Type',
        { enabled: true, webhooks: [{ url: 'https://example.com', headers: { 'Content-Type': 'text/plain' } }] },
        'webhooks[0].headers: "Content-Type" is set by Switchyard and cannot be overridden',
      ],
      ['a missing enabled switch', { webhooks: webhooks(1) }, 'enabled: is required'],
      ['a non-boolean enabled', { enabled: 'yes', webhooks: webhooks(1) }, 'enabled: must be boolean'],
      ['a missing webhook url', { enabled: true, webhooks: [{}] }, 'webhooks[0].url: is required'],
      ['a number as shared secret', { enabled: true, sharedSecret: 7, webhooks: [] }, 'sharedSecret: must be string'],
    ])('rejects %s with a 400 naming the field and the rule', async (_case, payload, message) => {
      const res = await createDestination(sourceId, payload);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ code: 'invalid_request', message });
    });

    it('applies the same rules to a PATCH', async () => {
      const id = (await createDestination(sourceId, { enabled: false, webhooks: webhooks(1) })).json().id;
      const tooMany = await app.inject({ method: 'PATCH', url: `/admin/destinations/${id}`, headers: auth, payload: { webhooks: webhooks(6) } });
      expect(tooMany.json()).toEqual({ code: 'invalid_request', message: 'webhooks: at most 5 webhook URLs per destination' });
      const ftp = await app.inject({
        method: 'PATCH',
        url: `/admin/destinations/${id}`,
        headers: auth,
        payload: { webhooks: [{ url: 'ftp://example.com' }] },
      });
      expect(ftp.json().message).toBe('webhooks[0].url: must use the http or https scheme, not ftp');
      expect((await store.destinations.get(id))?.webhooks).toEqual([{ url: 'https://example.com/hook/0', headers: {} }]);
    });

    it('rejects an unknown field instead of ignoring it', async () => {
      const id = (await createDestination(sourceId, { enabled: false, webhooks: [] })).json().id;
      const res = await app.inject({ method: 'PATCH', url: `/admin/destinations/${id}`, headers: auth, payload: { enable: true } });
      expect(res.json()).toEqual({ code: 'invalid_request', message: 'enable: is not a known field; did you mean enabled?' });
    });

    it('accepts exactly 5 webhooks with 5 headers each', async () => {
      const payload = { enabled: true, webhooks: webhooks(5).map((w) => ({ ...w, headers: headers(5) })) };
      const res = await createDestination(sourceId, payload);
      expect(res.statusCode).toBe(201);
      expect(res.json().webhooks).toHaveLength(5);
    });
  });
});

describe('two processes on one database file', () => {
  it("see each other's writes (API and worker each open their own store)", async () => {
    const worker = await openStore({ databasePath });
    try {
      const { source, writeKey } = await store.sources.create('shared');
      expect(await worker.sources.findByWriteKey(writeKey)).toEqual(source);

      const destination = await worker.destinations.create(source.id, {
        enabled: true,
        sharedSecret: 'k',
        webhooks: [{ url: 'https://example.com', headers: {} }],
      });
      expect(await store.destinations.get(destination.id)).toEqual(destination);
      expect(await store.destinations.listEnabledIds(source.id)).toEqual([destination.id]);

      await store.destinations.update(destination.id, { enabled: false });
      expect(await worker.destinations.listEnabledIds(source.id)).toEqual([]);
      expect(await worker.destinations.listSourceIdsWithEnabled()).not.toContain(source.id);

      await worker.sources.delete(source.id);
      expect(await store.sources.get(source.id)).toBeUndefined();
      expect(await store.destinations.get(destination.id)).toBeUndefined();
    } finally {
      await worker.close();
    }
  });
});

/** A separate Node process that opens the store (migrating it) and creates one source. */
function openInAnotherProcess(databasePath: string) {
  const script = `
    const { openStore } = require(${JSON.stringify(path.resolve(__dirname, '../../src/store'))});
    openStore({ databasePath: process.env.DATABASE_PATH })
      .then(async (store) => { await store.sources.create('process ' + process.pid); await store.close(); })
      .catch((err) => { console.error(err.message); process.exit(1); });`;
  return promisify(execFile)(process.execPath, ['-r', 'tsx/cjs', '-e', script], {
    cwd: path.resolve(__dirname, '../..'),
    env: { ...process.env, DATABASE_PATH: databasePath },
  });
}

describe('processes starting together on a new database file', () => {
  it('migrate it once between them, and all of them can write', async () => {
    const fresh = path.join(dir, 'fresh', 'switchyard.db');
    // Without the migration lock this often fails: two processes both create "sources".
    await Promise.all(Array.from({ length: 6 }, () => openInAnotherProcess(fresh)));
    const store = await openStore({ databasePath: fresh });
    try {
      expect(await store.sources.list()).toHaveLength(6);
    } finally {
      await store.close();
    }
  });
});
