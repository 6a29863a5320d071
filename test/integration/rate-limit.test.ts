import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Agent, Pool, request } from 'undici';
import { rawExchange } from '../helpers/raw-http';
import type { Receiver } from '../helpers/receiver';
import { basicAuth, sourceWithDestination, type TestSystem, useSystem } from '../helpers/system';

const WINDOW_MS = 3_000;
const LIMIT = 5;

let system: TestSystem;
let receiver: Receiver;
useSystem(
  (s, r) => {
    system = s;
    receiver = r;
  },
  { overrides: { ingestRateLimit: LIMIT, ingestUnauthenticatedRateLimit: LIMIT, ingestRateWindow: WINDOW_MS } },
);

const track = (writeKey: string, messageId: string, via: 'basic' | 'body' = 'basic', remoteAddress = '127.0.0.1') =>
  system.app.inject({
    method: 'POST',
    url: '/v1/track',
    remoteAddress,
    headers: via === 'basic' ? { authorization: basicAuth(writeKey) } : {},
    payload: { userId: 'u', event: 'Flood', messageId, ...(via === 'body' && { writeKey }) },
  });

describe('rate limiting per write key', () => {
  it('answers 429 with Retry-After and a JSON error past the limit, while another source carries on', async () => {
    const noisy = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
    const quiet = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });

    const flood = await Promise.all(Array.from({ length: 3 * LIMIT }, (_, i) => track(noisy.writeKey, `noisy-${i}`, i % 2 ? 'body' : 'basic')));
    const statuses = flood.map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 200)).toHaveLength(LIMIT);
    expect(statuses.filter((s) => s === 429)).toHaveLength(2 * LIMIT);

    const limited = flood.find((r) => r.statusCode === 429)!;
    expect(limited.json()).toEqual({ code: 'rate_limited', message: expect.stringMatching(/^too many requests for this write key \(at most 5 per 3s\); retry in \d+ seconds?$/) });
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(WINDOW_MS / 1000);

    // The quiet source has its own bucket, whatever the noisy one does.
    for (let i = 0; i < LIMIT; i++) expect((await track(quiet.writeKey, `quiet-${i}`)).statusCode).toBe(200);

    // A request refused with 429 was not accepted: its message is never delivered.
    const accepted = flood.map((r, i) => (r.statusCode === 200 ? `noisy-${i}` : undefined)).filter(Boolean) as string[];
    for (const id of accepted) await receiver.waitForMessage(id);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const delivered = new Set(receiver.requests.map((r) => JSON.parse(r.body).messageId as string).filter((id) => id.startsWith('noisy-')));
    expect([...delivered].sort()).toEqual([...accepted].sort());

    // Once the window has passed the noisy source is served again.
    await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000 + 100));
    expect((await track(noisy.writeKey, 'noisy-after')).statusCode).toBe(200);
  });

  it('keeps unknown write keys in their own buckets (a key spray cannot use up a real source)', async () => {
    const real = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
    const spray = await Promise.all(Array.from({ length: 20 }, (_, i) => track(`not-a-key-${i % 2}`, `spray-${i}`)));
    expect(new Set(spray.map((r) => r.statusCode))).toEqual(new Set([401, 429]));
    // From another address: the spraying one waits out its window whatever key it sends (behind-proxy.test.ts).
    expect((await track(real.writeKey, 'real-1', 'basic', '127.0.0.3')).statusCode).toBe(200);
  });

  it('limits requests without a valid write key per client address: a random key per request cannot spray past it, and a valid key from another address is unaffected', async () => {
    const real = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
    const address = system.app.server.address();
    const port = typeof address === 'object' && address ? address.port : (await system.app.listen({ port: 0, host: '127.0.0.1' }), (system.app.server.address() as AddressInfo).port);
    const url = `http://127.0.0.1:${port}/v1/track`;
    const sprayer = new Pool(`http://127.0.0.1:${port}`, { connections: 32 });
    // The client's own option: undici passes its localAddress over one given under `connect`.
    const elsewhere = new Agent({ localAddress: '127.0.0.2' });
    try {
      const started = Date.now();
      const spray = Array.from({ length: 2_000 }, (_, i) =>
        sprayer
          .request({ method: 'POST', path: '/v1/track', headers: { authorization: basicAuth(`random-${randomUUID()}`), 'content-type': 'application/json' }, body: JSON.stringify({ userId: 'u', event: 'Spray', messageId: `spray-${i}` }) })
          .then(async (r) => (await r.body.dump(), r.statusCode)),
      );
      // In the middle of the burst, a real source on another address is served.
      const fromElsewhere = await request(url, { dispatcher: elsewhere, method: 'POST', headers: { authorization: basicAuth(real.writeKey), 'content-type': 'application/json' }, body: JSON.stringify({ userId: 'u', event: 'Real', messageId: 'real-elsewhere' }) });
      expect(fromElsewhere.statusCode).toBe(200);
      await fromElsewhere.body.dump();
      const statuses = await Promise.all(spray);
      // Only the address's allowance per window got as far as a 401; everything else was limited.
      const windows = Math.ceil((Date.now() - started) / WINDOW_MS) + 1;
      expect(statuses.filter((s) => s !== 401 && s !== 429)).toEqual([]);
      expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(LIMIT * windows);
      expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(2_000 - LIMIT * windows);
      await receiver.waitForMessage('real-elsewhere');
    } finally {
      await sprayer.close();
      await elsewhere.close();
    }
  });

  it('refuses an unknown write key in the Authorization header before reading the body', async () => {
    const address = system.app.server.address();
    const port = typeof address === 'object' && address ? address.port : (await system.app.listen({ port: 0, host: '127.0.0.1' }), (system.app.server.address() as AddressInfo).port);
    // Announces 400 KB and sends none of it: the 401 comes without waiting for the body.
    const head = `POST /v1/batch HTTP/1.1\r\nHost: x\r\nAuthorization: ${basicAuth('not-a-key')}\r\nContent-Type: application/json\r\nContent-Length: 400000\r\n\r\n`;
    const reply = await rawExchange(port, [head], { timeoutMs: 5_000 });
    expect([401, 429]).toContain(reply.status);
    expect(reply.elapsedMs).toBeLessThan(5_000);
  });

  it('limits unknown write keys on the settings route per client address too, and lets a page cache a real source\'s settings', async () => {
    const real = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
    const guesses = await Promise.all(Array.from({ length: 3 * LIMIT }, () => system.app.inject({ method: 'GET', url: `/v1/projects/guess-${randomUUID()}/settings` })));
    expect(guesses.filter((r) => r.statusCode === 404)).toHaveLength(LIMIT);
    expect(guesses.filter((r) => r.statusCode === 429)).toHaveLength(2 * LIMIT);
    expect(guesses.find((r) => r.statusCode === 404)!.headers['cache-control']).toBe('no-store');
    const settings = await system.app.inject({ method: 'GET', url: `/v1/projects/${real.writeKey}/settings`, remoteAddress: '127.0.0.3' });
    expect(settings.statusCode).toBe(200);
    expect(settings.headers['cache-control']).toBe('public, max-age=300');
  });
});
