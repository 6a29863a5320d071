import { deliveryWorkflowId } from '../../src/delivery/ids';
import { startReceiver, startSelfSignedReceiver, type Receiver } from '../helpers/receiver';
import { deliveryResult, send, sourceWithDestination, startSystem, type TestSystem, useSystem } from '../helpers/system';

let system: TestSystem;
const receivers: Receiver[] = [];
useSystem((s) => (system = s), { alsoClose: receivers });

async function receiver(status: number | ((n: number) => number) = 200): Promise<Receiver> {
  const r = await startReceiver((_req, n) => ({ status: typeof status === 'number' ? status : status(n) }));
  receivers.push(r);
  return r;
}

async function deliver(urls: string[], messageId: string, system_ = system) {
  const { source, writeKey, destination } = await sourceWithDestination(system_.store, { webhooks: urls.map((url) => ({ url, headers: {} })) });
  await send(system_.app, writeKey, 'track', { userId: 'u', event: 'Retried', messageId });
  return { source, destination, result: () => deliveryResult(system_.client, source.id, messageId) };
}

it('stops at the first URL that answers 2xx: later URLs are never called', async () => {
  const [first, second] = [await receiver(200), await receiver(200)];
  const { result } = await deliver([first.url, second.url], 'first-wins');
  expect(await result()).toMatchObject({ ok: true, report: { destinations: [{ status: 'delivered', webhookIndex: 0, rounds: 1 }] } });
  expect(first.requests).toHaveLength(1);
  expect(second.requests).toHaveLength(0);
});

it('fails over to the next URL when the first answers 5xx, and does not retry the first after a success', async () => {
  const [broken, healthy] = [await receiver(503), await receiver(200)];
  const { result } = await deliver([broken.url, healthy.url], 'failover');
  expect(await result()).toMatchObject({ ok: true, report: { destinations: [{ status: 'delivered', webhookIndex: 1, rounds: 1 }] } });
  expect(broken.requests).toHaveLength(1);
  expect(healthy.requests).toHaveLength(1);
});

it('retries a 5xx answer until the webhook succeeds, with the same message each time', async () => {
  const flaky = await receiver((n) => (n < 2 ? 500 : 200));
  const { result } = await deliver([flaky.url], 'retry-5xx');
  expect(await result()).toMatchObject({ ok: true, report: { destinations: [{ status: 'delivered', rounds: 3 }] } });
  expect(flaky.requests).toHaveLength(3);
  expect(new Set(flaky.requests.map((r) => r.body)).size).toBe(1);
});

it('ends failed when the retry window runs out, without attempts after the deadline', async () => {
  // The window is a hard deadline (no attempt after it): long enough here for several
  // rounds even when the server fires a short timer a second late, as the dev server may.
  const windowMs = 4_000;
  const short = await startSystem({ deliveryRetryWindow: windowMs, deliveryInitialBackoff: 200, deliveryMaxBackoff: 400 });
  try {
    const down = await receiver(502);
    const { source, result } = await deliver([down.url], 'window-exhausted', short);
    const outcome = await result();
    expect(outcome).toMatchObject({ ok: false });
    expect(outcome.ok || outcome.message).toMatch(/retry window exhausted/);
    expect(down.requests.length).toBeGreaterThan(2);
    // The window counts from the delivery's start: the workflow's first event.
    const history = await short.client.workflow.getHandle(deliveryWorkflowId(source.id, 'window-exhausted')).fetchHistory();
    const startedAt = Number(history.events![0].eventTime!.seconds) * 1000 + Math.floor((history.events![0].eventTime!.nanos ?? 0) / 1e6);
    const last = down.requests[down.requests.length - 1];
    expect(last.at - startedAt).toBeLessThan(windowMs);
  } finally {
    await short.close();
  }
});

it('does not retry a 4xx: the URL is given up and the workflow fails without waiting', async () => {
  const rejecting = await receiver(400);
  const { result } = await deliver([rejecting.url], 'no-retry-4xx');
  const outcome = await result();
  expect(outcome).toMatchObject({ ok: false, report: { destinations: [{ status: 'failed', rounds: 1 }] } });
  expect(outcome.ok || outcome.message).toMatch(/failed permanently: webhook 0: HTTP 400/);
  await new Promise((r) => setTimeout(r, 500));
  expect(rejecting.requests).toHaveLength(1);
});

it('does not follow a redirect (3xx is permanent for that URL)', async () => {
  const target = await receiver(200);
  const redirecting = await startReceiver(() => ({ status: 307, headers: { location: target.url } }));
  receivers.push(redirecting);
  const { result } = await deliver([redirecting.url], 'no-redirect');
  expect(await result()).toMatchObject({ ok: false });
  expect(target.requests).toHaveLength(0);
});

it('retries a 408 and a 429, waiting at least the Retry-After', async () => {
  const limited = await startReceiver((_req, n) => (n === 0 ? { status: 429, headers: { 'retry-after': '2' } } : n === 1 ? { status: 408 } : { status: 200 }));
  receivers.push(limited);
  const { result } = await deliver([limited.url], 'retry-after');
  expect(await result()).toMatchObject({ ok: true });
  expect(limited.requests).toHaveLength(3);
  expect(limited.requests[1].at - limited.requests[0].at).toBeGreaterThanOrEqual(2_000);
});

it('treats no answer within the delivery timeout as retryable', async () => {
  const slow = await startReceiver((_req, n) => ({ status: 200, delayMs: n === 0 ? 3_000 : 0 }));
  receivers.push(slow);
  const quick = await startSystem({ deliveryTimeout: 1_000 });
  try {
    const { result } = await deliver([slow.url], 'timeout-retried', quick);
    const outcome = await result();
    expect(outcome).toMatchObject({ ok: true, report: { destinations: [{ status: 'delivered', rounds: 2 }] } });
    expect(slow.requests).toHaveLength(2);
  } finally {
    await quick.close();
  }
});

it('refuses an HTTPS endpoint with a self-signed certificate: no request is sent and the attempt is not retried', async () => {
  const selfSigned = await startSelfSignedReceiver();
  receivers.push(selfSigned);
  const { result } = await deliver([selfSigned.url], 'self-signed');
  const outcome = await result();
  expect(outcome).toMatchObject({ ok: false, report: { destinations: [{ status: 'failed', rounds: 1 }] } });
  expect(outcome.ok || outcome.message).toMatch(/TLS certificate rejected/);
  expect(selfSigned.requests).toHaveLength(0);
});

it('stops retrying once the destination is switched off', async () => {
  const down = await receiver(503);
  const { destination, result } = await deliver([down.url], 'switched-off');
  await down.waitForRequests(2);
  await system.store.destinations.update(destination.id, { enabled: false });
  expect(await result()).toMatchObject({ ok: true, report: { destinations: [{ status: 'stopped' }] } });
  const count = down.requests.length;
  await new Promise((r) => setTimeout(r, 1_500));
  expect(down.requests).toHaveLength(count);
});

it('uses a changed shared secret from the next attempt on', async () => {
  const flaky = await receiver((n) => (n === 0 ? 503 : 200));
  const { source, writeKey, destination } = await sourceWithDestination(system.store, { sharedSecret: 'old', webhooks: [{ url: flaky.url, headers: {} }] });
  await send(system.app, writeKey, 'track', { userId: 'u', event: 'Rotated', messageId: 'rotate' });
  await flaky.waitForRequests(1);
  await system.store.destinations.update(destination.id, { sharedSecret: 'new' });
  expect(await deliveryResult(system.client, source.id, 'rotate')).toMatchObject({ ok: true });
  const { createHmac } = await import('node:crypto');
  expect(flaky.requests[1].headers['x-signature']).toBe(createHmac('sha1', 'new').update(flaky.requests[1].body).digest('hex'));
});
