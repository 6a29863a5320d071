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
  { overrides: { ingestRateLimit: LIMIT, ingestRateWindow: WINDOW_MS } },
);

const track = (writeKey: string, messageId: string, via: 'basic' | 'body' = 'basic') =>
  system.app.inject({
    method: 'POST',
    url: '/v1/track',
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
    expect((await track(real.writeKey, 'real-1')).statusCode).toBe(200);
  });
});
