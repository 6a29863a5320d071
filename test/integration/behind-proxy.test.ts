import { randomUUID } from 'node:crypto';
import { buildApp } from '../../src/api/app';
import type { Config } from '../../src/config';
import { deliveriesOptions, temporalDeliveries } from '../../src/temporal/temporal-deliveries';
import { basicAuth, sourceWithDestination, startSystem, type TestSystem } from '../helpers/system';

/**
 * What a client behind (or around) a reverse proxy can and cannot make the API do: decide where
 * another visitor's events go, escape the unauthenticated limit, or reach the token-less codec.
 * The proxy is played by inject's `remoteAddress`, the client by the X-Forwarded-* it sends.
 */
const PROXY = '10.0.0.1';
const LIMIT = 3;
// Long enough that no bucket empties during the file: every test uses client addresses of its own.
const WINDOW_MS = 60_000;

const systems: TestSystem[] = [];
const start = async (overrides: Partial<Config>) => {
  const system = await startSystem({ ingestUnauthenticatedRateLimit: LIMIT, ingestRateWindow: WINDOW_MS, ...overrides });
  systems.push(system);
  return system;
};
afterAll(async () => {
  await Promise.all(systems.map((system) => system.close()));
});

const settings = (system: TestSystem, writeKey: string, headers: Record<string, string>, remoteAddress = PROXY) =>
  system.app.inject({ method: 'GET', url: `/v1/projects/${writeKey}/settings`, remoteAddress, headers });

const track = (system: TestSystem, writeKey: string, forwardedFor: string | undefined, remoteAddress = PROXY) =>
  system.app.inject({
    method: 'POST',
    url: '/v1/track',
    remoteAddress,
    headers: { authorization: basicAuth(writeKey), ...(forwardedFor !== undefined && { 'x-forwarded-for': forwardedFor }) },
    payload: { userId: 'u', event: 'Behind a proxy' },
  });

const POISON = { 'x-forwarded-host': 'collector.evil.example', 'x-forwarded-proto': 'http', 'x-forwarded-for': '198.51.100.66' };

describe('the source settings route cannot be cache-poisoned', () => {
  it('takes apiHost only from PUBLIC_URL when it is set, whatever X-Forwarded-Host says, and lets shared caches keep it', async () => {
    const system = await start({ trustProxy: 1, publicUrl: 'https://events.example.com' });
    const { writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: 'https://receiver.example.com/hook', headers: {} }] });
    const reply = await settings(system, writeKey, POISON);
    expect(reply.statusCode).toBe(200);
    expect(reply.json().integrations['Segment.io']).toMatchObject({ apiHost: 'events.example.com/v1', protocol: 'https' });
    expect(reply.headers['cache-control']).toBe('public, max-age=300');
  });

  it('without PUBLIC_URL, a reply shaped by X-Forwarded-Host/-Proto is private and varies on them (beside Origin)', async () => {
    const system = await start({ trustProxy: 1, publicUrl: '', corsOrigins: ['https://shop.example.com'] });
    const { writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: 'https://receiver.example.com/hook', headers: {} }] });
    const reply = await settings(system, writeKey, { ...POISON, origin: 'https://shop.example.com' });
    expect(reply.statusCode).toBe(200);
    // The trusted proxy's headers count for this request; no shared cache may hand the answer to anyone else.
    expect(reply.json().integrations['Segment.io']).toMatchObject({ apiHost: 'collector.evil.example/v1', protocol: 'http' });
    expect(reply.headers['cache-control']).toBe('private, max-age=300');
    const vary = String(reply.headers.vary).split(/,\s*/).map((name) => name.toLowerCase());
    expect(vary).toEqual(expect.arrayContaining(['origin', 'x-forwarded-host', 'x-forwarded-proto']));
  });
});

describe('the unauthenticated limit behind a proxy', () => {
  it('with TRUST_PROXY=true, keys on the address the proxy saw, not the leftmost X-Forwarded-For entry the client chose', async () => {
    const system = await start({ trustProxy: true });
    const spray = [];
    for (let i = 0; i < 3 * LIMIT; i++) spray.push((await track(system, `random-${randomUUID()}`, `192.0.2.${i + 1}, 203.0.113.10`)).statusCode);
    expect(spray).toEqual([...Array(LIMIT).fill(401), ...Array(2 * LIMIT).fill(429)]);
    // Another client of the same proxy has a bucket of its own.
    expect((await track(system, `random-${randomUUID()}`, '203.0.113.11')).statusCode).toBe(401);
  });

  it('with TRUST_PROXY as a hop count, keys each client of the proxy apart, and a client cannot pick its own key in front of them', async () => {
    const system = await start({ trustProxy: 1 });
    const statuses = [];
    for (let i = 0; i < LIMIT + 1; i++) statuses.push((await track(system, `random-${randomUUID()}`, `192.0.2.${i + 1}, 203.0.113.20`)).statusCode);
    expect(statuses).toEqual([...Array(LIMIT).fill(401), 429]);
    expect((await track(system, `random-${randomUUID()}`, '203.0.113.21')).statusCode).toBe(401);
  });

  it('refuses an address past its limit before looking its write key up, and still answers a valid key from it without a lookup', async () => {
    const system = await start({ trustProxy: 1 });
    const real = await sourceWithDestination(system.store, { webhooks: [{ url: 'https://receiver.example.com/hook', headers: {} }] });
    const lookups = jest.spyOn(system.store.sources, 'findByWriteKey');
    try {
      for (let i = 0; i < LIMIT; i++) expect((await track(system, `random-${randomUUID()}`, '203.0.113.30')).statusCode).toBe(401);
      expect(lookups).toHaveBeenCalledTimes(LIMIT);
      for (let i = 0; i < 5; i++) expect((await track(system, `random-${randomUUID()}`, '203.0.113.30')).statusCode).toBe(429);
      const limited = await track(system, `random-${randomUUID()}`, '203.0.113.30');
      expect(limited.statusCode).toBe(429);
      expect(limited.headers['retry-after']).toMatch(/^\d+$/);
      // A valid key from the same address is never refused for its neighbours' guesses.
      expect((await track(system, real.writeKey, '203.0.113.30')).statusCode).toBe(200);
      expect(lookups).toHaveBeenCalledTimes(LIMIT);

      // The settings route spends the same way: once an address has guessed its share, guesses cost no lookup.
      lookups.mockClear();
      for (let i = 0; i < LIMIT; i++) expect((await settings(system, `guess-${randomUUID()}`, { 'x-forwarded-for': '203.0.113.31' })).statusCode).toBe(404);
      for (let i = 0; i < 5; i++) expect((await settings(system, `guess-${randomUUID()}`, { 'x-forwarded-for': '203.0.113.31' })).statusCode).toBe(429);
      expect((await settings(system, real.writeKey, { 'x-forwarded-for': '203.0.113.31' })).statusCode).toBe(200);
      expect(lookups).toHaveBeenCalledTimes(LIMIT);
    } finally {
      lookups.mockRestore();
    }
  });
});

describe("npm start's token-less codec server", () => {
  it('answers a loopback peer only when no proxy header says the request came from elsewhere', async () => {
    const system = await start({});
    const local = await buildApp({ config: system.config, store: system.store, deliveries: temporalDeliveries(system.client, deliveriesOptions(system.config, system.keyring)), keyring: system.keyring, codecOpenToLoopback: true });
    try {
      const decode = (headers: Record<string, string>) =>
        local.inject({ method: 'POST', url: '/codec/decode', remoteAddress: '127.0.0.1', headers: { 'content-type': 'application/json', ...headers }, payload: JSON.stringify({ payloads: [] }) });
      expect((await decode({})).statusCode).toBe(200);
      const proxied: Record<string, string>[] = [{ 'x-forwarded-for': '203.0.113.40' }, { forwarded: 'for=203.0.113.40;proto=https' }, { 'x-real-ip': '203.0.113.40' }];
      for (const headers of proxied) {
        const reply = await decode(headers);
        expect(reply.statusCode).toBe(401);
        expect(reply.json()).toEqual({ code: 'unauthorized', message: 'Authorization: a "Bearer <admin token>" header is required' });
      }
    } finally {
      await local.close();
    }
  });
});
