import path from 'node:path';
import { faultDir, startOwnWorker, stopProcess, type OwnWorker } from '../helpers/faults';
import { waitFor } from '../helpers/processes';
import { freePort } from '../helpers/ports';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { basicAuth, deliveryResult, send, sourceWithDestination, startSystem, trackBatch, type TestSystem } from '../helpers/system';

/**
 * Metrics: real traffic through the API and a worker process of this file's own (its
 * own task queue, METRICS_PORT and TEMPORAL_METRICS_BIND), then both /metrics scraped: the counts
 * match what was sent and delivered, and no write key or webhook URL shows anywhere.
 */

const queue = `metrics-${process.pid}`;
const dir = faultDir('metrics');
let worker: OwnWorker | undefined;
let system: TestSystem;
let metricsPort: number;
let temporalMetricsBind: string;
const receivers: Receiver[] = [];

beforeAll(async () => {
  metricsPort = await freePort();
  temporalMetricsBind = `127.0.0.1:${await freePort()}`;
  worker = await startOwnWorker(
    { TEMPORAL_TASK_QUEUE: queue, METRICS_PORT: String(metricsPort), HOST: '127.0.0.1', TEMPORAL_METRICS_BIND: temporalMetricsBind },
    path.join(dir, 'worker.log'),
  );
  system = await startSystem({ temporalTaskQueue: queue });
}, 240_000);

afterAll(async () => {
  await stopProcess(worker?.process, 'SIGTERM');
  await Promise.all(receivers.map((r) => r.close()));
  await system?.close();
});

/** Every sample of a Prometheus text scrape: name, labels and value. */
function samples(text: string): { name: string; labels: Record<string, string>; value: number }[] {
  return text
    .split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
      if (!match) throw new Error(`not a sample line: ${line}`);
      const labels: Record<string, string> = {};
      for (const [, key, value] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[key] = value;
      return { name: match[1], labels, value: Number(match[3]) };
    });
}

/** The value of one series (0 when absent). */
function value(text: string, name: string, labels: Record<string, string> = {}): number {
  const found = samples(text).find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v) && Object.keys(s.labels).length === Object.keys(labels).length);
  return found?.value ?? 0;
}

async function scrapeWorker(): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/plain');
  // Kept longer than a scraper keeps an idle connection, so a scrape never meets the server closing it.
  expect(response.headers.get('keep-alive')).toBe('timeout=72');
  return response.text();
}

it('counts ingestion on the API and attempts and deliveries on the worker, with no write key or webhook URL in any label', async () => {
  const ok = await startReceiver();
  const flaky = await startReceiver((_request, n) => ({ status: n === 0 ? 503 : 200 }));
  receivers.push(ok, flaky);
  // Query tokens, paths, headers and secrets the scrape must never show.
  const okUrl = `${ok.url}/hooks/secret-path?token=tok-ok-123`;
  const flakyUrl = `${flaky.url}/hooks/flaky-path?token=tok-flaky-456`;
  const a = await sourceWithDestination(system.store, { webhooks: [{ url: okUrl, headers: { 'X-Api-Key': 'header-secret-a' } }], sharedSecret: 'shared-secret-a' });
  const b = await sourceWithDestination(system.store, { webhooks: [{ url: flakyUrl, headers: {} }] });

  // API traffic: a batch of 3 tracks, an identify and a page → 200s; a track without event → 400; an unknown key → 401; the settings route.
  const batch = await system.app.inject({ method: 'POST', url: '/v1/batch', headers: { authorization: basicAuth(a.writeKey) }, payload: trackBatch(['m-1', 'm-2', 'm-3']) });
  expect(batch.statusCode).toBe(200);
  await send(system.app, a.writeKey, 'identify', { userId: 'user-secret-id', messageId: 'm-4', traits: { plan: 'pro' } });
  await send(system.app, b.writeKey, 'page', { userId: 'u', messageId: 'm-5', name: 'Home' });
  const invalid = await system.app.inject({ method: 'POST', url: '/v1/track', headers: { authorization: basicAuth(a.writeKey) }, payload: { userId: 'u' } });
  expect(invalid.statusCode).toBe(400);
  const unknown = await system.app.inject({ method: 'POST', url: '/v1/track', headers: { authorization: basicAuth('not-a-write-key') }, payload: { userId: 'u', event: 'E' } });
  expect(unknown.statusCode).toBe(401);
  const settings = await system.app.inject({ method: 'GET', url: `/v1/projects/${a.writeKey}/settings` });
  expect(settings.statusCode).toBe(200);

  const api = await system.app.inject({ method: 'GET', url: '/metrics' });
  expect(api.statusCode).toBe(200);
  expect(api.headers['content-type']).toContain('text/plain');
  expect(value(api.body, 'switchyard_messages_ingested_total', { type: 'track' })).toBe(3);
  expect(value(api.body, 'switchyard_messages_ingested_total', { type: 'identify' })).toBe(1);
  expect(value(api.body, 'switchyard_messages_ingested_total', { type: 'page' })).toBe(1);
  expect(value(api.body, 'switchyard_messages_ingested_total', { type: 'alias' })).toBe(0);
  expect(value(api.body, 'switchyard_ingest_requests_total', { route: '/v1/batch', status: '200' })).toBe(1);
  expect(value(api.body, 'switchyard_ingest_requests_total', { route: '/v1/identify', status: '200' })).toBe(1);
  expect(value(api.body, 'switchyard_ingest_requests_total', { route: '/v1/page', status: '200' })).toBe(1);
  expect(value(api.body, 'switchyard_ingest_requests_total', { route: '/v1/track', status: '400' })).toBe(1);
  expect(value(api.body, 'switchyard_ingest_requests_total', { route: '/v1/track', status: '401' })).toBe(1);
  expect(value(api.body, 'switchyard_ingest_requests_total', { route: '/v1/projects/:writeKey/settings', status: '200' })).toBe(1);
  expect(value(api.body, 'switchyard_ingest_request_duration_seconds_count', { route: '/v1/track' })).toBe(2);
  // Only ingestion routes are counted: /metrics itself and admin are not.
  expect(samples(api.body).filter((s) => s.name === 'switchyard_ingest_requests_total').every((s) => s.labels.route.startsWith('/v1/'))).toBe(true);

  // Every message delivered: 5 first attempts succeed or (the flaky one) retry once, then succeed.
  for (const [sourceId, messageId] of [[a.source.id, 'm-1'], [a.source.id, 'm-2'], [a.source.id, 'm-3'], [a.source.id, 'm-4'], [b.source.id, 'm-5']]) {
    expect(await deliveryResult(system.client, sourceId, messageId)).toMatchObject({ ok: true, report: { destinations: [{ status: 'delivered' }] } });
  }
  expect(ok.requests).toHaveLength(4);
  expect(flaky.requests).toHaveLength(2);

  // The sink reports a delivery's end once its last workflow task completes: poll briefly.
  // Both counters carry the destination id, each destination's outcomes from 0.
  const [dstA, dstB] = [a.destination.id, b.destination.id];
  let scraped = '';
  await waitFor(async () => {
    scraped = await scrapeWorker();
    const delivered = value(scraped, 'switchyard_deliveries_total', { status: 'delivered', destination: dstA }) + value(scraped, 'switchyard_deliveries_total', { status: 'delivered', destination: dstB });
    if (delivered < 5) throw new Error(`deliveries not yet counted:\n${scraped}`);
  }, 15_000);
  expect(dstA).toMatch(/^dst_/);
  expect(value(scraped, 'switchyard_delivery_attempts_total', { outcome: 'success', destination: dstA })).toBe(4);
  expect(value(scraped, 'switchyard_delivery_attempts_total', { outcome: 'success', destination: dstB })).toBe(1);
  expect(value(scraped, 'switchyard_delivery_attempts_total', { outcome: 'retry', destination: dstA })).toBe(0);
  expect(value(scraped, 'switchyard_delivery_attempts_total', { outcome: 'retry', destination: dstB })).toBe(1);
  expect(scraped).toContain(`switchyard_delivery_attempts_total{outcome="permanent",destination="${dstA}"} 0`);
  expect(value(scraped, 'switchyard_delivery_attempt_duration_seconds_count', { outcome: 'success' })).toBe(5);
  expect(value(scraped, 'switchyard_deliveries_total', { status: 'delivered', destination: dstA })).toBe(4);
  expect(value(scraped, 'switchyard_deliveries_total', { status: 'delivered', destination: dstB })).toBe(1);
  expect(scraped).toContain(`switchyard_deliveries_total{status="failed",destination="${dstA}"} 0`);
  expect(scraped).toContain(`switchyard_deliveries_total{status="stopped",destination="${dstB}"} 0`);
  // The worker's task queues were polled just now.
  const lastPoll = value(scraped, 'switchyard_worker_last_poll_timestamp_seconds', { task_queue: queue });
  expect(Math.abs(Date.now() / 1000 - lastPoll)).toBeLessThan(120);
  expect(value(scraped, 'switchyard_webhook_attempts_in_flight')).toBe(0);
  // Node's default metrics are served too.
  expect(scraped).toMatch(/^process_cpu_user_seconds_total /m);

  // The Temporal SDK's own worker metrics, from its runtime's exporter.
  const temporal = await (await fetch(`http://${temporalMetricsBind}/metrics`)).text();
  expect(temporal).toMatch(/^temporal_\w+/m);

  for (const text of [api.body, scraped, temporal]) {
    for (const secret of [a.writeKey, b.writeKey, okUrl, flakyUrl, ok.url, flaky.url, 'tok-ok-123', 'tok-flaky-456', 'secret-path', 'header-secret-a', 'shared-secret-a', 'user-secret-id']) {
      expect(text).not.toContain(secret);
    }
  }
}, 180_000);

it('shows a URL a 410 switched off as switchyard_webhook_disabled, and drops every series of a destination once it is deleted', async () => {
  const gone = await startReceiver(() => ({ status: 410 }));
  const ok = await startReceiver();
  receivers.push(gone, ok);
  const { source, writeKey, destination } = await sourceWithDestination(system.store, { webhooks: [{ url: gone.url, headers: {} }, { url: ok.url, headers: {} }] });
  await send(system.app, writeKey, 'track', { userId: 'u', event: 'Gone', messageId: 'm-gone-1' });
  expect(await deliveryResult(system.client, source.id, 'm-gone-1')).toMatchObject({ ok: true, report: { destinations: [{ status: 'delivered', webhookIndex: 1 }] } });
  const disabled = await waitFor(async () => {
    const text = await scrapeWorker();
    if (value(text, 'switchyard_webhook_disabled', { destination: destination.id, index: '0' }) !== 1) throw new Error(`not yet shown:\n${text}`);
    return text;
  }, 15_000);
  expect(value(disabled, 'switchyard_delivery_attempts_total', { outcome: 'permanent', destination: destination.id })).toBe(1);
  expect(value(disabled, 'switchyard_webhook_disabled', { destination: destination.id, index: '1' })).toBe(0);

  expect(await system.store.destinations.delete(destination.id)).toBe(true);
  // The scrape that reads the deletion drops the series; the next one shows none of them.
  await waitFor(async () => {
    const text = await scrapeWorker();
    if (text.includes(destination.id)) throw new Error(`still shown:\n${text}`);
  }, 15_000);
}, 120_000);

it('names every destination in switchyard_destination_info on the API, renamed and deleted at the next scrape', async () => {
  const { source, destination } = await sourceWithDestination(system.store, { name: 'Orders "CRM"', webhooks: [{ url: 'https://crm.example.com/hook', headers: {} }] });
  const scrapeApi = async () => (await system.app.inject({ method: 'GET', url: '/metrics' })).body;
  const info = (text: string) => samples(text).filter((s) => s.name === 'switchyard_destination_info' && s.labels.destination === destination.id);
  expect(info(await scrapeApi())).toEqual([{ name: 'switchyard_destination_info', labels: { destination: destination.id, source: source.id, name: 'Orders \\"CRM\\"', type: 'webhooks' }, value: 1 }]);
  await system.store.destinations.update(destination.id, { name: 'Orders CRM' });
  expect(info(await scrapeApi()).map((s) => s.labels.name)).toEqual(['Orders CRM']);
  // The worker leaves the names to the API: a join wants one series per destination.
  expect(await scrapeWorker()).not.toMatch(/^switchyard_destination_info\{/m);
  expect(await system.store.destinations.delete(destination.id)).toBe(true);
  expect(info(await scrapeApi())).toEqual([]);
});

it('answers 404 on the worker metrics port for anything but GET /metrics', async () => {
  expect((await fetch(`http://127.0.0.1:${metricsPort}/`)).status).toBe(404);
  expect((await fetch(`http://127.0.0.1:${metricsPort}/metrics`, { method: 'POST' })).status).toBe(404);
});
