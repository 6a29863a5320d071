import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import { ADMIN_TOKEN, basicAuth, deliveryResult, sourceWithDestination, type TestSystem } from '../helpers/system';
import { closeSystemWithWorker, startSystemWithWorker } from '../helpers/system-with-worker';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver';
import { startOwnApi, type OwnApi } from '../helpers/faults';
import { stopProcess, waitFor } from '../helpers/processes';

/**
 * One trace from the sender's `traceparent` to the receiver's, through a
 * real API process (src/server.ts, exporting OTLP/protobuf), a real worker process (exporting
 * OTLP/JSON) and a loopback OTLP receiver standing in for a collector. The API runs as its own
 * process, not in Jest's: the OTLP exporter loads node:http by dynamic import, which Jest's module
 * sandbox refuses. The in-process system is this file's store, Temporal client and admin API.
 */
const QUEUE = `tracing-${randomUUID()}`;
const TRACEPARENT_SHAPE = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;
const FAST_DELIVERY_ENV = { DELIVERY_RETRY_WINDOW: '20s', DELIVERY_TIMEOUT: '2s', DELIVERY_INITIAL_BACKOFF: '200ms', DELIVERY_MAX_BACKOFF: '1s' };

let system: TestSystem;
let api: OwnApi;
let openApi: OwnApi | undefined;
let worker: ChildProcess;
let otlp: OtlpReceiver;
const receivers: Receiver[] = [];
const logFile = (name: string) => path.join(process.env.SWITCHYARD_TEST_DIR ?? '.', name);

beforeAll(async () => {
  otlp = await startOtlpReceiver();
  const tracing = { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: otlp.url, OTEL_BSP_SCHEDULE_DELAY: '100' };
  ({ system, worker } = await startSystemWithWorker(QUEUE, {
    logName: 'tracing-worker.log',
    workerEnv: { ...tracing, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'tracing-test-worker' },
  }));
  api = await startOwnApi({ ...tracing, ...FAST_DELIVERY_ENV, TEMPORAL_TASK_QUEUE: QUEUE, ADMIN_TOKEN, OTEL_SERVICE_NAME: 'tracing-test-api' }, logFile('tracing-api.log'));
});

afterAll(async () => {
  await stopProcess(openApi?.process);
  await stopProcess(api?.process);
  await closeSystemWithWorker(system, worker, receivers);
  await otlp?.close();
});

async function receiver(statuses: number[]): Promise<Receiver> {
  const r = await startReceiver((_, n) => ({ status: statuses[Math.min(n, statuses.length - 1)] }));
  receivers.push(r);
  return r;
}

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const traceparentOf = (headers: Record<string, unknown>) => TRACEPARENT_SHAPE.exec(String(headers.traceparent));
const ofTrace = (traceId: string) => (spans: ReceivedSpan[]) => spans.filter((span) => span.traceId === traceId);

/** Sent again (same messageIds: delivered once) until 200: the API process learns of a source made by this one within a second (write-key-directory.ts). */
async function ingest(to: OwnApi, route: string, writeKey: string, body: unknown, headers: Record<string, string>) {
  await waitFor(async () => {
    const response = await fetch(`${to.url}${route}`, { method: 'POST', headers: { authorization: basicAuth(writeKey), 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    if (response.status !== 200) throw new Error(`${route} answered ${response.status}: ${await response.text()}`);
  }, 10_000);
}
const track = (to: OwnApi, writeKey: string, messageId: string, headers: Record<string, string>) => ingest(to, '/v1/track', writeKey, { userId: 'u-trace', event: 'Traced', messageId }, headers);

describe('W3C trace context from the sender to the webhook', () => {
  it('continues the sender\'s trace: each attempt its own span id under trace T, exported as webhook.attempt spans', async () => {
    const [traceId, senderSpan] = [hex(16), hex(8)];
    const hook = await receiver([500, 200]);
    // The URL's query and credentials must not reach a span.
    const url = `${hook.url.replace('http://', 'http://user:pass@')}?token=not-for-spans`;
    const { source, writeKey, destination } = await sourceWithDestination(system.store, { webhooks: [{ url, headers: {} }] });
    await track(api, writeKey, 'traced-1', { traceparent: `00-${traceId}-${senderSpan}-01`, tracestate: 'vendor=abc', baggage: 'user=never-forwarded' });
    expect(await deliveryResult(system.client, source.id, 'traced-1')).toMatchObject({ ok: true, report: { destinations: [{ status: 'delivered', rounds: 2 }] } });

    const requests = await hook.waitForRequests(2);
    const sent = requests.map((request) => traceparentOf(request.headers));
    expect(sent.map((match) => match?.[1])).toEqual([traceId, traceId]);
    const [first, second] = sent.map((match) => match![2]);
    expect(first).not.toBe(second);
    expect([first, second]).not.toContain(senderSpan);
    expect(requests.map((request) => request.headers.tracestate)).toEqual(['vendor=abc', 'vendor=abc']);
    expect(requests.map((request) => request.headers.baggage)).toEqual([undefined, undefined]);

    const spans = ofTrace(traceId)(await otlp.waitFor((all) => ofTrace(traceId)(all).filter((span) => span.name === 'webhook.attempt').length === 2 && ofTrace(traceId)(all).some((span) => span.parentSpanId === senderSpan)));
    const requestSpan = spans.find((span) => span.parentSpanId === senderSpan)!;
    expect(requestSpan).toMatchObject({ name: 'POST /v1/track', serviceName: 'tracing-test-api', traceState: 'vendor=abc' });
    const messageSpan = spans.find((span) => span.name === 'message.accept')!;
    expect(messageSpan).toMatchObject({ parentSpanId: requestSpan.spanId, attributes: { 'switchyard.message_id': 'traced-1', 'switchyard.source_id': source.id } });
    const attempts = spans.filter((span) => span.name === 'webhook.attempt').sort((a, b) => Number(a.attributes['switchyard.attempt']) - Number(b.attributes['switchyard.attempt']));
    expect(attempts.map((span) => span.spanId)).toEqual([first, second]);
    for (const span of attempts) expect(span).toMatchObject({ parentSpanId: messageSpan.spanId, serviceName: 'tracing-test-worker' });
    const common = { 'switchyard.message_id': 'traced-1', 'switchyard.destination_id': destination.id, 'switchyard.webhook_index': 0, 'http.request.method': 'POST', 'url.full': hook.url };
    expect(attempts[0].attributes).toEqual({ ...common, 'switchyard.attempt': 1, 'http.response.status_code': 500, 'error.type': '500' });
    expect(attempts[1].attributes).toEqual({ ...common, 'switchyard.attempt': 2, 'http.response.status_code': 200 });
    // Both exporters' protocols reached the receiver: the API's protobuf, the worker's JSON.
    expect(otlp.contentTypes).toEqual(expect.arrayContaining(['application/x-protobuf', 'application/json']));
  });

  it.each([
    ['all-zero trace id', `00-${'0'.repeat(32)}-${'1'.repeat(16)}-01`],
    ['all-zero parent id', `00-${'1'.repeat(32)}-${'0'.repeat(16)}-01`],
    ['version ff', `ff-${'2'.repeat(32)}-${'3'.repeat(16)}-01`],
    ['not hex', `00-${'z'.repeat(32)}-${'3'.repeat(16)}-01`],
  ])('starts a new trace for an invalid traceparent (%s), without error', async (_, invalid) => {
    const hook = await receiver([200]);
    const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: hook.url, headers: {} }] });
    const messageId = `invalid-${randomUUID()}`;
    await track(api, writeKey, messageId, { traceparent: invalid, tracestate: 'vendor=dropped' });
    expect(await deliveryResult(system.client, source.id, messageId)).toMatchObject({ ok: true });
    const [request] = await hook.waitForRequests(1);
    const traceId = traceparentOf(request.headers)![1];
    expect(invalid).not.toContain(traceId);
    expect(traceId).not.toBe('0'.repeat(32));
    // The caller's tracestate goes only with the caller's trace.
    expect(request.headers.tracestate).toBeUndefined();
    const spans = ofTrace(traceId)(await otlp.waitFor((all) => ofTrace(traceId)(all).some((span) => span.name === 'POST /v1/track')));
    expect(spans.find((span) => span.name === 'POST /v1/track')).toMatchObject({ parentSpanId: '' });
  });

  it('sends no trace header to a destination with propagateTraceContext false, and still exports its attempt span', async () => {
    const [traceId, senderSpan] = [hex(16), hex(8)];
    const hook = await receiver([200]);
    const { source, writeKey, destination } = await sourceWithDestination(system.store, { webhooks: [{ url: hook.url, headers: { traceparent: 'static-by-operator' } }] });
    const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const patched = await system.app.inject({ method: 'PATCH', url: `/admin/destinations/${destination.id}`, headers: auth, payload: { propagateTraceContext: false } });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({ propagateTraceContext: false });
    await track(api, writeKey, 'untraced-1', { traceparent: `00-${traceId}-${senderSpan}-01`, tracestate: 'vendor=abc', baggage: 'user=x' });
    expect(await deliveryResult(system.client, source.id, 'untraced-1')).toMatchObject({ ok: true });
    const [request] = await hook.waitForRequests(1);
    // The operator's own static header is theirs to send; Switchyard adds nothing of the trace.
    expect(request.headers.traceparent).toBe('static-by-operator');
    expect(request.headers.tracestate).toBeUndefined();
    expect(request.headers.baggage).toBeUndefined();
    await otlp.waitFor((all) => ofTrace(traceId)(all).some((span) => span.name === 'webhook.attempt' && span.attributes['switchyard.destination_id'] === destination.id));
  });

  it('makes each message of a batch a child of the request\'s span', async () => {
    const [traceId, senderSpan] = [hex(16), hex(8)];
    const hook = await receiver([200]);
    const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: hook.url, headers: {} }] });
    const ids = ['batch-trace-1', 'batch-trace-2'];
    await ingest(api, '/v1/batch', writeKey, { batch: ids.map((messageId) => ({ type: 'track', userId: 'u-trace', event: 'Batched', messageId })) }, { traceparent: `00-${traceId}-${senderSpan}-01` });
    for (const id of ids) expect(await deliveryResult(system.client, source.id, id)).toMatchObject({ ok: true });
    const spans = ofTrace(traceId)(await otlp.waitFor((all) => ofTrace(traceId)(all).filter((span) => span.name === 'webhook.attempt').length === 2));
    const requestSpan = spans.find((span) => span.parentSpanId === senderSpan)!;
    expect(requestSpan.name).toBe('POST /v1/batch');
    const messages = spans.filter((span) => span.name === 'message.accept');
    expect(messages.map((span) => span.attributes['switchyard.message_id']).sort()).toEqual(ids);
    for (const message of messages) expect(message.parentSpanId).toBe(requestSpan.spanId);
    const attempts = spans.filter((span) => span.name === 'webhook.attempt');
    expect(attempts.map((span) => span.parentSpanId).sort()).toEqual(messages.map((span) => span.spanId).sort());
    // Each request names its own message's span's trace, the batch's.
    expect((await hook.waitForRequests(2)).map((request) => traceparentOf(request.headers)?.[1])).toEqual([traceId, traceId]);
  });

  it('carries the trace context of a message whose body is not sealed (no payload keys) the same way', async () => {
    openApi ??= await startOwnApi({ ...FAST_DELIVERY_ENV, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: otlp.url, OTEL_BSP_SCHEDULE_DELAY: '100', TEMPORAL_TASK_QUEUE: QUEUE, ADMIN_TOKEN, PAYLOAD_ENCRYPTION: 'off' }, logFile('tracing-open-api.log'));
    const [traceId, senderSpan] = [hex(16), hex(8)];
    const hook = await receiver([200]);
    const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: hook.url, headers: {} }] });
    await track(openApi, writeKey, 'open-traced-1', { traceparent: `00-${traceId}-${senderSpan}-01` });
    expect(await deliveryResult(system.client, source.id, 'open-traced-1')).toMatchObject({ ok: true });
    const [request] = await hook.waitForRequests(1);
    expect(traceparentOf(request.headers)?.[1]).toBe(traceId);
    await otlp.waitFor((all) => ofTrace(traceId)(all).some((span) => span.name === 'webhook.attempt'));
  });
});

describe('CORS', () => {
  it('allows a browser preflight asking for traceparent and tracestate on the ingestion routes', async () => {
    const origin = 'https://shop.example.com';
    const response = await system.app.inject({
      method: 'OPTIONS',
      url: '/v1/track',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, traceparent, tracestate' },
    });
    expect(response.statusCode).toBeLessThan(300);
    expect(response.headers['access-control-allow-origin']).toBeDefined();
    const allowed = String(response.headers['access-control-allow-headers']).toLowerCase().split(/\s*,\s*/);
    expect(allowed).toEqual(expect.arrayContaining(['traceparent', 'tracestate']));
  });
});
