import path from 'node:path';
import { faultDir, startOwnWorker, stopProcess, type OwnWorker } from '../helpers/faults';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { ADMIN_TOKEN, deliveryResult, send, sourceWithDestination, startSystem, type TestSystem, useSystem } from '../helpers/system';

/**
 * Webhook health: the run's worker process counts every attempt in memory and adds it to
 * the store every HEALTH_FLUSH_INTERVAL (200 ms in tests, global-setup.ts); the admin route reads it
 * back per URL. Real Temporal, real worker, real receivers.
 */

let system: TestSystem;
const receivers: Receiver[] = [];
useSystem((s) => (system = s), { alsoClose: receivers });

async function receiver(...replies: { status: number; delayMs?: number }[]): Promise<Receiver> {
  // The n-th request gets the n-th reply; after the list, the last one.
  const r = await startReceiver((_req, n) => replies[Math.min(n, replies.length - 1)]);
  receivers.push(r);
  return r;
}

const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
const health = (id: string) => system.app.inject({ method: 'GET', url: `/admin/destinations/${id}/health`, headers: auth });
const enable = (id: string, index: number | string) => system.app.inject({ method: 'POST', url: `/admin/destinations/${id}/webhooks/${index}/enable`, headers: auth });

/** Reads the health until the first URL's last day shows `attempts` (the worker flushes every 200 ms). */
async function healthWith(id: string, attempts: number, index = 0) {
  const until = Date.now() + 15_000;
  for (;;) {
    const response = await health(id);
    expect(response.statusCode).toBe(200);
    const body = response.json();
    if (body.webhooks[index].lastDay.attempts >= attempts || Date.now() > until) return body;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('GET /admin/destinations/:id/health', () => {
  it('counts each attempt of a URL that fails then succeeds: classes, rate, latency percentiles, last error, a chart series; no secret shown', async () => {
    const started = Date.now();
    // Message 1: 503, 503, then 200 after 300 ms. Message 2: 404 (a permanent failure).
    const flaky = await receiver({ status: 503 }, { status: 503 }, { status: 200, delayMs: 300 }, { status: 404 });
    const { source, writeKey, destination } = await sourceWithDestination(system.store, {
      webhooks: [{ url: `${flaky.url}?token=query-secret-123`, headers: { 'X-Api-Key': 'header-secret-456' } }],
      sharedSecret: 'shared-secret-789',
    });
    await send(system.app, writeKey, 'track', { userId: 'u', event: 'Health', messageId: 'health-1' });
    expect(await deliveryResult(system.client, source.id, 'health-1')).toMatchObject({ ok: true, report: { destinations: [{ status: 'delivered', rounds: 3 }] } });
    await send(system.app, writeKey, 'track', { userId: 'u', event: 'Health', messageId: 'health-2' });
    expect(await deliveryResult(system.client, source.id, 'health-2')).toMatchObject({ ok: false });

    const body = await healthWith(destination.id, 4);
    expect(JSON.stringify(body)).not.toMatch(/query-secret|header-secret|shared-secret|token=/);
    expect(body).toMatchObject({ destinationId: destination.id, stepMinutes: 15 });
    const [url] = body.webhooks;
    expect(url.index).toBe(0);
    expect(url.url).toBe(flaky.url);
    expect(url.disabled).toBeUndefined();
    for (const span of [url.lastHour, url.lastDay]) {
      expect(span).toMatchObject({ attempts: 4, successes: 1, failures: { retry: 2, permanent: 1 }, successRate: 0.25 });
      // Three fast answers and one held 300 ms: the median is fast, the 95th percentile the slow one.
      expect(span.p50Ms).toBeLessThan(250);
      expect(span.p95Ms).toBeGreaterThanOrEqual(250);
      expect(span.p95Ms).toBeLessThanOrEqual(2_500);
    }
    expect(url.lastError.reason).toBe('HTTP 404');
    expect(Date.parse(url.lastError.at)).toBeGreaterThanOrEqual(started - 1_000);
    expect(Date.parse(url.lastError.at)).toBeLessThanOrEqual(Date.now());
    expect(url.series).toHaveLength(96);
    expect(url.series.reduce((sum: number, point: { attempts: number }) => sum + point.attempts, 0)).toBe(4);
    expect(url.series.reduce((sum: number, point: { failures: number }) => sum + point.failures, 0)).toBe(3);
    const last = url.series[95];
    expect(Date.parse(last.start)).toBeLessThanOrEqual(Date.now());
    expect(Date.now() - Date.parse(last.start)).toBeLessThan(15 * 60_000);
  });

  it('shows a URL that answered 410 as switched off with the reason; enable switches it back on (idempotently) and it is delivered to again', async () => {
    const gone = await receiver({ status: 410 }, { status: 200 });
    const backup = await receiver({ status: 200 });
    const { source, writeKey, destination } = await sourceWithDestination(system.store, {
      webhooks: [
        { url: gone.url, headers: {} },
        { url: backup.url, headers: {} },
      ],
    });
    await send(system.app, writeKey, 'track', { userId: 'u', event: 'Gone', messageId: 'gone-health-1' });
    expect(await deliveryResult(system.client, source.id, 'gone-health-1')).toMatchObject({ ok: true, report: { destinations: [{ webhookIndex: 1 }] } });

    const body = await healthWith(destination.id, 1);
    expect(body.webhooks[0]).toMatchObject({
      index: 0,
      disabled: { reason: 'answered HTTP 410 Gone to message gone-health-1', at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) },
      lastDay: { attempts: 1, successes: 0, failures: { retry: 0, permanent: 1 } },
      lastError: { reason: expect.stringContaining('410 Gone') },
    });
    expect((await healthWith(destination.id, 1, 1)).webhooks[1]).toMatchObject({ index: 1, lastDay: { attempts: 1, successes: 1 } });

    const on = await enable(destination.id, 0);
    expect(on.statusCode).toBe(200);
    expect(on.json()).toEqual({ index: 0, url: gone.url, enabled: true, wasDisabled: true });
    const again = await enable(destination.id, 0);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ wasDisabled: false });
    expect((await health(destination.id)).json().webhooks[0].disabled).toBeUndefined();

    await send(system.app, writeKey, 'track', { userId: 'u', event: 'Back', messageId: 'gone-health-2' });
    expect(await deliveryResult(system.client, source.id, 'gone-health-2')).toMatchObject({ ok: true, report: { destinations: [{ webhookIndex: 0 }] } });
    expect(gone.requests).toHaveLength(2);
    expect((await healthWith(destination.id, 2)).webhooks[0].lastDay).toMatchObject({ attempts: 2, successes: 1 });
  });

  it('answers 404 for an unknown destination or webhook index, 400 for an index that is not a number, 401 without the token', async () => {
    const r = await receiver({ status: 200 });
    const { destination } = await sourceWithDestination(system.store, { webhooks: [{ url: r.url, headers: {} }] });
    expect((await health('dst_00000000000000000000000000000000')).statusCode).toBe(404);
    expect((await enable('dst_00000000000000000000000000000000', 0)).statusCode).toBe(404);
    expect((await enable(destination.id, 1)).statusCode).toBe(404);
    expect((await enable(destination.id, 'x')).statusCode).toBe(400);
    expect((await system.app.inject({ method: 'GET', url: `/admin/destinations/${destination.id}/health` })).statusCode).toBe(401);
    // A URL never attempted: zeros and nulls, a full empty series.
    expect((await health(destination.id)).json().webhooks[0]).toMatchObject({ lastDay: { attempts: 0, successRate: null, p50Ms: null }, series: expect.arrayContaining([]) });
  });
});

describe('a worker that stops', () => {
  let own: OwnWorker | undefined;
  afterAll(async () => {
    if (own) await stopProcess(own.process, 'SIGKILL');
  });

  it('writes the health it had not flushed yet when it stops on SIGTERM', async () => {
    const r = await receiver({ status: 200 });
    const queue = `health-shutdown-${process.pid}`;
    // An interval longer than the test: only the flush at shutdown can write these counts.
    own = await startOwnWorker({ TEMPORAL_TASK_QUEUE: queue, HEALTH_FLUSH_INTERVAL: '1h' }, path.join(faultDir('health-shutdown'), 'worker.log'));
    const ownSystem = await startSystem({ temporalTaskQueue: queue });
    try {
      const { source, writeKey, destination } = await sourceWithDestination(ownSystem.store, { webhooks: [{ url: r.url, headers: {} }] });
      await send(ownSystem.app, writeKey, 'track', { userId: 'u', event: 'Stop', messageId: 'health-stop-1' });
      expect(await deliveryResult(ownSystem.client, source.id, 'health-stop-1')).toMatchObject({ ok: true });
      expect((await health(destination.id)).json().webhooks[0].lastDay.attempts).toBe(0);
      own.process.kill('SIGTERM');
      expect(await own.exited).toBe(0);
      expect((await health(destination.id)).json().webhooks[0].lastDay).toMatchObject({ attempts: 1, successes: 1 });
    } finally {
      await ownSystem.close();
    }
  }, 120_000);
});
