import { startReceiver } from '../helpers/receiver';
import { ADMIN_TOKEN, deliveryResult, send, sourceWithDestination, startSystem, type TestSystem } from '../helpers/system';

/**
 * Accountability, against the whole API on its SQLite store:
 * nobody without credentials can fill the append-only audit log; an address past its share of
 * wrong tokens is refused before anything more is recorded; and a row names the address the
 * failure limiter counts, not the X-Forwarded-For entry a client wrote itself.
 */
const FAILURE_LIMIT = 5;
const PROXY = '10.0.0.1';

let system: TestSystem;
beforeAll(async () => {
  system = await startSystem({ trustProxy: true, adminTokenFailureLimit: FAILURE_LIMIT, adminTokenFailureWindow: 60_000 });
}, 120_000);
afterAll(() => system?.close());

const rows = async () => system.store.audit.list({ limit: 10_000 });

it('adds at most a handful of audit rows for 200 credential-less /admin, /codec and /portal requests', async () => {
  const before = (await rows()).length;
  const urls = [
    { method: 'GET', url: '/admin/status' },
    { method: 'GET', url: `/admin/destinations/dst_${'x'.repeat(90)}` },
    { method: 'POST', url: '/codec/decode' },
    { method: 'GET', url: '/portal/settings.json' },
  ] as const;
  for (let i = 0; i < 200; i++) {
    const { method, url } = urls[i % urls.length];
    const reply = await system.app.inject({ method, url, remoteAddress: PROXY, headers: { 'x-forwarded-for': `198.51.100.${i % 250}` } });
    expect(reply.statusCode).toBe(401);
  }
  expect((await rows()).length - before).toBeLessThanOrEqual(3);
});

it('answers 429 to an address past its share of wrong admin tokens, credential-less or not, and records nothing more', async () => {
  const from = { remoteAddress: PROXY, headers: { 'x-forwarded-for': '203.0.113.50' } };
  const before = (await rows()).length;
  for (let i = 0; i < FAILURE_LIMIT; i++) {
    expect((await system.app.inject({ method: 'GET', url: '/admin/sources', ...from, headers: { ...from.headers, authorization: `Bearer wrong-${i}` } })).statusCode).toBe(401);
  }
  expect((await rows()).length - before).toBe(FAILURE_LIMIT);
  for (let i = 0; i < 50; i++) {
    const authorization = i % 2 === 0 ? { authorization: `Bearer wrong-again-${i}` } : {};
    expect((await system.app.inject({ method: 'GET', url: '/admin/sources', ...from, headers: { ...from.headers, ...authorization } })).statusCode).toBe(429);
  }
  expect((await rows()).length - before).toBe(FAILURE_LIMIT);
});

it('records the address the failure limiter counts, not the leftmost X-Forwarded-For entry the client chose, on denied and on changes', async () => {
  // The client writes "forged"; the proxy appends the address it saw ("real").
  const headers = { 'x-forwarded-for': '192.0.2.66, 203.0.113.77' };
  const denied = await system.app.inject({ method: 'GET', url: '/admin/sources', remoteAddress: PROXY, headers: { ...headers, authorization: 'Bearer not-the-token' } });
  expect(denied.statusCode).toBe(401);
  const created = await system.app.inject({ method: 'POST', url: '/admin/sources', remoteAddress: PROXY, headers: { ...headers, authorization: `Bearer ${ADMIN_TOKEN}` }, payload: { name: 'audited from behind a proxy' } });
  expect(created.statusCode).toBe(201);
  const all = await rows();
  expect(all.find((row) => row.target === created.json().id)).toMatchObject({ action: 'source.create', outcome: 'success', ip: '203.0.113.77' });
  // Newest first: the denied request just made.
  expect(all.find((row) => row.outcome === 'denied')).toMatchObject({ action: 'GET /admin/sources', ip: '203.0.113.77' });
  expect(JSON.stringify(all)).not.toContain('192.0.2.66');
});

it('records reads of decrypted payloads, a row a minute per token and target: the codec decode and a delivery detail served with its message', async () => {
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const receiver = await startReceiver();
  try {
    const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
    await send(system.app, writeKey, 'track', { messageId: 'read-1', userId: 'u-read', event: 'Read' });
    expect(await deliveryResult(system.client, source.id, 'read-1')).toMatchObject({ ok: true });
    const minted = await system.app.inject({ method: 'POST', url: '/admin/tokens', headers: admin, payload: { name: 'metadata only', scopes: ['read'] } });
    const reader = { authorization: `Bearer ${minted.json().token}` };

    const before = (await rows()).length;
    for (let i = 0; i < 20; i++) {
      expect((await system.app.inject({ method: 'POST', url: '/codec/decode', headers: admin, payload: { payloads: [] } })).statusCode).toBe(200);
      const detail = await system.app.inject({ method: 'GET', url: `/admin/sources/${source.id}/deliveries/read-1`, headers: admin });
      expect(detail.json().message).toMatchObject({ event: 'Read' });
      // Metadata only (no payloads:read): no payload read, no row.
      const metadata = await system.app.inject({ method: 'GET', url: `/admin/sources/${source.id}/deliveries/read-1`, headers: reader });
      expect(metadata.json().message).toBeUndefined();
    }
    const added = (await rows()).slice(0, (await rows()).length - before);
    expect(added.map((row) => [row.action, row.target, row.actor.name]).sort()).toEqual([
      ['payload.decode', null, 'ADMIN_TOKEN'],
      ['payload.read', `${source.id}/read-1`, 'ADMIN_TOKEN'],
    ]);
  } finally {
    await receiver.close();
  }
}, 60_000);
