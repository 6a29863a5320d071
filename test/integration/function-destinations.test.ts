import { deliveryWorkflowId } from '../../src/delivery/ids';
import { signBody } from '../../src/delivery/signature';
import { emittedMessageId } from '../../src/functions/source-webhook';
import { requestSubject, sourceFunctionWorkflowId, type SourceFunctionRequest } from '../../src/messages/source-function-request';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { waitFor } from '../helpers/processes';
import { ADMIN_TOKEN, decodedWorkflowHistoryText, deliveryResult, hasDeliveryWorkflow, send, type TestSystem, useSystem } from '../helpers/system';

/**
 * Destination functions through the real API, the run's Temporal and worker process (the sandbox in
 * it) and a receiver on 127.0.0.1: the handler is the delivery and its fetch calls the attempt; a
 * delivery runs the version deployed when it started, its retries included; a sensitive setting
 * is masked in every answer and absent from workflow history. Source functions the same way: a
 * request to the source's webhookUrl runs onRequest on the worker, and what it emits is delivered
 * to the source's destinations; retries run on a short configured schedule.
 */

let system: TestSystem;
let receiver: Receiver;
useSystem(
  (s) => {
    system = s;
  },
  // Segment's source-function retries wait minutes; here a fifth of a second.
  { overrides: { sourceFunctionRetryInitial: 200, sourceFunctionRetryMax: 400 } },
);
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => receiver?.close());

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const API_KEY = 'fn-secret-api-key-7f3a9c';

const settingDefinitions = [
  { name: 'url', label: 'URL', description: 'Where to send', type: 'STRING', required: true, sensitive: false },
  { name: 'apiKey', label: 'API key', description: 'Secret', type: 'STRING', required: true, sensitive: true },
];

/** A handler that sends to `<url>/<tag>`, and asks for a retry when the receiver answers 5xx. */
const sendingCode = (tag: string) => `
async function onTrack(event, settings) {
  const response = await fetch(settings.url + '/${tag}', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: 'Bearer ' + settings.apiKey },
    body: JSON.stringify({ messageId: event.messageId, event: event.event }),
  });
  if (response.status >= 500) throw new RetryError('receiver answered ' + response.status);
}
`;

const call = async (method: 'GET' | 'POST' | 'PATCH' | 'PUT', url: string, payload?: unknown) => {
  const response = await system.app.inject({ method, url, headers: admin, ...(payload !== undefined && { payload: payload as object }) });
  return { status: response.statusCode, json: response.body ? response.json() : undefined, body: response.body };
};

async function functionDestination(code: string) {
  const fn = await call('POST', '/admin/functions', { code, displayName: 'Sender', resourceType: 'DESTINATION', settings: settingDefinitions });
  expect(fn.status).toBe(201);
  const { source, writeKey } = await system.store.sources.create(`function ${expect.getState().currentTestName ?? ''}`.slice(0, 200));
  const created = await call('POST', `/admin/sources/${source.id}/destinations`, { type: 'function', enabled: true, functionId: fn.json.id, settings: { url: receiver.url, apiKey: API_KEY } });
  expect(created.status).toBe(201);
  return { functionId: fn.json.id as string, source, writeKey, destination: created.json as { id: string; functionId: string; settings: Record<string, unknown> }, answers: [fn.body, created.body] };
}

describe('a function destination', () => {
  it('is created under a source with its settings checked, and answers with its sensitive settings masked', async () => {
    const { functionId, source, destination, answers } = await functionDestination(sendingCode('check'));
    expect(destination).toMatchObject({ type: 'function', functionId, settings: { url: receiver.url, apiKey: `${'•'.repeat(10)}${API_KEY.slice(-4)}` } });
    const read = await call('GET', `/admin/destinations/${destination.id}`);
    expect(read.json.settings.apiKey).toBe(`${'•'.repeat(10)}${API_KEY.slice(-4)}`);
    answers.push(read.body);
    // Sent back masked, as read: the secret keeps its value (checked by delivery below through the header).
    const patched = await call('PATCH', `/admin/destinations/${destination.id}`, { settings: read.json.settings });
    expect(patched.status).toBe(200);
    answers.push(patched.body);
    const stored = await system.store.destinations.get(destination.id);
    expect(stored?.function?.settings.apiKey).toBe(API_KEY);
    for (const answer of answers) expect(answer).not.toContain(API_KEY);

    const refusals: [Record<string, unknown>, RegExp][] = [
      [{ type: 'function', enabled: true, settings: {} }, /^functionId: is required/],
      [{ type: 'function', enabled: true, functionId: 'dfn_000000000000000000000000', settings: {} }, /^functionId: no function dfn_0{24}/],
      [{ type: 'function', enabled: true, functionId, settings: { url: receiver.url } }, /^settings\.apiKey: is required by the function/],
      [{ type: 'function', enabled: true, functionId, settings: { url: 5, apiKey: 'k' } }, /^settings\.url: must be a string/],
      [{ type: 'function', enabled: true, functionId, settings: { url: 'u', apiKey: 'k', other: 1 } }, /^settings\.other: the function defines no such setting/],
      [{ type: 'function', enabled: true, functionId, settings: { url: 'u', apiKey: 'k' }, webhooks: [{ url: receiver.url }] }, /^webhooks: a function destination's handler makes its own requests/],
      [{ enabled: true, functionId, webhooks: [{ url: receiver.url }] }, /^functionId: only a function destination/],
    ];
    for (const [body, message] of refusals) {
      const refused = await call('POST', `/admin/sources/${source.id}/destinations`, body);
      expect({ body, status: refused.status, message: refused.json.message }).toEqual({ body, status: 400, message: expect.stringMatching(message) });
    }
    // Segment's shape: the metadata id of a destination function is the hex of its dfn_ id.
    const hex = functionId.slice('dfn_'.length);
    const segmentShaped = await call('POST', `/admin/sources/${source.id}/destinations`, { metadataId: hex, name: 'CRM (Acme)', enabled: true, settings: { url: receiver.url, apiKey: API_KEY } });
    expect(segmentShaped).toMatchObject({ status: 201, json: { type: 'function', functionId, name: 'CRM (Acme)', settings: { apiKey: `${'•'.repeat(10)}${API_KEY.slice(-4)}` } } });
    const maskedExport = await call('POST', `/admin/sources/${source.id}/destinations`, { metadataId: hex, enabled: true, settings: { url: receiver.url, apiKey: '••••••••••9c3a' } });
    expect(maskedExport).toMatchObject({ status: 400, json: { message: expect.stringMatching(/^settings\.apiKey: is masked as Segment exports secrets/) } });
    const source2 = await system.store.sources.create('function kind check');
    const insert = await call('POST', '/admin/functions', { code: 'function onTrack(e) { return e; }', resourceType: 'INSERT_DESTINATION' });
    const wrongKind = await call('POST', `/admin/sources/${source2.source.id}/destinations`, { type: 'function', enabled: true, functionId: insert.json.id, settings: {} });
    expect(wrongKind).toMatchObject({ status: 400, json: { message: expect.stringMatching(/^functionId: .* is a INSERT_DESTINATION function/) } });
  });

  it('runs its handler as the delivery, and retries run the version deployed when the delivery started', async () => {
    const { functionId, source, writeKey, destination } = await functionDestination(sendingCode('v1'));
    // The first request is answered 503 only after a while: v2 is deployed while the handler waits for it.
    let slowed = false;
    receiver.respond((request) => {
      if (request.path !== '/hook/v1' || slowed) return { status: 200 };
      slowed = true;
      return { status: 503, delayMs: 1_500 };
    });
    await send(system.app, writeKey, 'track', { userId: 'u1', event: 'Order Completed', messageId: 'fd-pinned' });
    await waitFor(() => {
      if (!receiver.requests.some((r) => r.path === '/hook/v1')) throw new Error('the first attempt has not reached the receiver');
    }, 20_000);
    expect((await call('PATCH', `/admin/functions/${functionId}`, { code: sendingCode('v2') })).status).toBe(200);
    expect((await call('POST', `/admin/functions/${functionId}/deploy`, {})).json).toMatchObject({ deployedVersion: 2 });

    expect(await deliveryResult(system.client, source.id, 'fd-pinned')).toMatchObject({ ok: true, report: { destinations: [{ destinationId: destination.id, status: 'delivered', rounds: 2 }] } });
    const pinnedRequests = receiver.requests.filter((r) => r.body.includes('fd-pinned'));
    expect(pinnedRequests.map((r) => r.path)).toEqual(['/hook/v1', '/hook/v1']);
    // The secret reached the receiver as the handler put it, and never workflow history.
    expect(pinnedRequests[1].headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(await decodedWorkflowHistoryText(system, deliveryWorkflowId(source.id, 'fd-pinned'))).not.toContain(API_KEY);

    // A delivery started after the deploy runs the new version.
    await send(system.app, writeKey, 'track', { userId: 'u1', event: 'Order Completed', messageId: 'fd-after-deploy' });
    expect(await deliveryResult(system.client, source.id, 'fd-after-deploy')).toMatchObject({ ok: true });
    expect(receiver.requests.filter((r) => r.body.includes('fd-after-deploy')).map((r) => r.path)).toEqual(['/hook/v2']);
  });

  it('is held while its destination is paused or rate-limited: the handler runs only when the message is sent, on the version the delivery started with', async () => {
    const { functionId, source, writeKey, destination } = await functionDestination(sendingCode('held-v1'));
    receiver.respond(() => ({ status: 200 }));
    expect((await call('PATCH', `/admin/destinations/${destination.id}`, { paused: true })).status).toBe(200);
    await send(system.app, writeKey, 'track', { userId: 'u1', event: 'Order Completed', messageId: 'fd-paused' });
    // Held: the delivery waits on a timer for the resume, and the handler has not run (its fetch would show).
    await waitFor(async () => {
      const { events } = await system.client.workflow.getHandle(deliveryWorkflowId(source.id, 'fd-paused')).fetchHistory();
      if (!events?.some((e) => e.timerStartedEventAttributes)) throw new Error('the delivery is not held yet');
    }, 20_000);
    expect(receiver.requests.filter((r) => r.body.includes('fd-paused'))).toEqual([]);
    // A deploy while it is held: the held message still runs the version its delivery started with.
    expect((await call('PATCH', `/admin/functions/${functionId}`, { code: sendingCode('held-v2') })).status).toBe(200);
    expect((await call('POST', `/admin/functions/${functionId}/deploy`, {})).json).toMatchObject({ deployedVersion: 2 });
    expect((await call('PATCH', `/admin/destinations/${destination.id}`, { paused: false })).status).toBe(200);
    expect(await deliveryResult(system.client, source.id, 'fd-paused')).toMatchObject({ ok: true, report: { destinations: [{ destinationId: destination.id, status: 'delivered' }] } });
    expect(receiver.requests.filter((r) => r.body.includes('fd-paused')).map((r) => r.path)).toEqual(['/hook/held-v1']);

    // One message a second: four messages' handlers run a second apart, none failed (a throttled attempt is held, not refused).
    expect((await call('PATCH', `/admin/destinations/${destination.id}`, { maxRequestsPerSecond: 1 })).status).toBe(200);
    const ids = ['fd-rate-0', 'fd-rate-1', 'fd-rate-2', 'fd-rate-3'];
    for (const messageId of ids) await send(system.app, writeKey, 'track', { userId: 'u1', event: 'Order Completed', messageId });
    for (const messageId of ids) expect(await deliveryResult(system.client, source.id, messageId)).toMatchObject({ ok: true });
    const times = receiver.requests.filter((r) => ids.some((id) => r.body.includes(id))).map((r) => r.at);
    expect(times).toHaveLength(ids.length);
    expect(Math.max(...times) - Math.min(...times)).toBeGreaterThanOrEqual((ids.length - 1.5) * 1_000);
  });

  it("answers to its function's display name in integrations, and only transformations scoped to its function reach it", async () => {
    const { functionId, source, writeKey } = await functionDestination(sendingCode('scoped'));
    expect((await call('PATCH', `/admin/functions/${functionId}`, { displayName: 'Orders CRM (Acme)' })).status).toBe(200);
    const transformation = (body: Record<string, unknown>) => call('POST', '/admin/transformations', { sourceId: source.id, enabled: true, if: 'all', ...body });
    // Scoped to Webhooks: a function destination is not one, so this never renames what it gets.
    expect((await transformation({ name: 'Webhooks only', destinationMetadataId: '54521fdc25e721e32a72ef04', newEventName: 'Renamed for Webhooks' })).status).toBe(201);
    // Scoped to its function, as Segment names a destination function's catalog entry: the hex of its dfn_ id.
    const hex = functionId.slice('dfn_'.length);
    expect((await transformation({ name: 'This function', destinationMetadataId: hex, if: "event = 'Scoped'", newEventName: 'Renamed for the function' })).status).toBe(201);
    const unknown = await transformation({ name: 'No such function', destinationMetadataId: 'f'.repeat(24), newEventName: 'x' });
    expect(unknown).toMatchObject({ status: 422, json: { message: expect.stringMatching(/^destinationMetadataId: f{24} is a Segment catalog destination Switchyard has none of/) } });

    await send(system.app, writeKey, 'track', { userId: 'u1', event: 'Scoped', messageId: 'fd-scoped', integrations: { All: false, 'Orders CRM (Acme)': true } });
    await send(system.app, writeKey, 'track', { userId: 'u1', event: 'Scoped', messageId: 'fd-off-by-name', integrations: { 'Orders CRM (Acme)': false, Webhooks: true } });
    expect(await deliveryResult(system.client, source.id, 'fd-scoped')).toMatchObject({ ok: true, report: { destinations: [{ status: 'delivered' }] } });
    expect(receiver.requests.filter((r) => r.body.includes('fd-scoped')).map((r) => JSON.parse(r.body) as unknown)).toEqual([{ messageId: 'fd-scoped', event: 'Renamed for the function' }]);
    expect(await hasDeliveryWorkflow(system.client, source.id, 'fd-off-by-name')).toBe(false);
  });

  it("shows each disposition in delivery detail and the overview, console output sealed with its attempt for payloads:read only", async () => {
    const { source, writeKey, destination } = await functionDestination(DISPOSITIONS_CODE);
    const messages: [string, string, Record<string, unknown>][] = [
      ['fd-rejected', 'identify', { userId: 'u-rejected' }],
      ['fd-dropped', 'page', { userId: 'u1', name: 'Home' }],
      ['fd-error', 'group', { userId: 'u1', groupId: 'g1' }],
      ['fd-unsupported', 'screen', { userId: 'u1', name: 'Main' }],
      ['fd-logged', 'track', { userId: 'u1', event: 'Logged' }],
      ['fd-timeout', 'track', { userId: 'u1', event: 'Slow' }],
    ];
    for (const [messageId, type, body] of messages) await send(system.app, writeKey, type, { ...body, messageId });
    const ended = async (messageId: string) => {
      const result = await deliveryResult(system.client, source.id, messageId);
      return result.report?.destinations[0];
    };
    const detail = async (messageId: string, token = ADMIN_TOKEN) => {
      const response = await system.app.inject({ method: 'GET', url: `/admin/sources/${source.id}/deliveries/${messageId}`, headers: { authorization: `Bearer ${token}` } });
      expect(response.statusCode).toBe(200);
      return { json: response.json(), body: response.body };
    };
    // Rejected and any other throw: failed at once, not retried; unsupported and dropped: stopped.
    expect(await ended('fd-rejected')).toMatchObject({ status: 'failed', rounds: 1, reason: expect.stringContaining('function:rejected: InvalidEventPayload') });
    expect(await ended('fd-error')).toMatchObject({ status: 'failed', rounds: 1, reason: expect.stringContaining('function:error: TypeError') });
    expect(await ended('fd-dropped')).toMatchObject({ status: 'stopped', reason: 'function:dropped: DropEvent' });
    expect(await ended('fd-unsupported')).toMatchObject({ status: 'stopped', reason: 'function:unsupported: EventNotSupported' });
    expect(await ended('fd-logged')).toMatchObject({ status: 'delivered' });
    // A timeout is retried like a RetryError: the second run of the same version delivers.
    expect(await ended('fd-timeout')).toMatchObject({ status: 'delivered', rounds: 2 });
    expect((await detail('fd-timeout')).json.destinations[0].attempts).toEqual([
      expect.objectContaining({ outcome: 'retry', error: 'function:timeout: Timeout' }),
      expect.objectContaining({ outcome: 'success' }),
    ]);

    expect((await detail('fd-rejected')).json.destinations[0]).toMatchObject({ status: 'failed', attempts: [{ outcome: 'permanent', error: expect.stringContaining('function:rejected') }] });
    expect((await detail('fd-dropped')).json.destinations[0]).toMatchObject({ status: 'stopped', reason: expect.stringContaining('function:dropped'), attempts: [{ error: expect.stringContaining('function:dropped') }] });

    const masked = `${'•'.repeat(10)}${API_KEY.slice(-4)}`;
    const reader = await system.app.inject({ method: 'POST', url: '/admin/tokens', headers: admin, payload: { name: 'function reader', scopes: ['read', 'payloads:read'] } });
    const withPayloads = await detail('fd-logged', reader.json<{ token: string }>().token);
    expect(withPayloads.json.destinations[0].attempts).toEqual([expect.objectContaining({ outcome: 'success', logs: [`log: sending Logged with ${masked}`] })]);
    // The error's message is user data (a function writes it from the event): sealed, shown to payloads:read only.
    const rejected = await detail('fd-rejected', reader.json<{ token: string }>().token);
    expect(rejected.json.destinations[0].attempts[0]).toMatchObject({ error: 'function:rejected: InvalidEventPayload', errorMessage: 'no email for u-rejected' });
    expect((await decodedWorkflowHistoryText(system, deliveryWorkflowId(source.id, 'fd-rejected'))).includes('no email for')).toBe(false);
    const readOnly = await system.app.inject({ method: 'POST', url: '/admin/tokens', headers: admin, payload: { name: 'function metadata reader', scopes: ['read'] } });
    const withoutPayloads = await detail('fd-logged', readOnly.json<{ token: string }>().token);
    expect(withoutPayloads.json.destinations[0].attempts[0]).not.toHaveProperty('logs');
    expect((await detail('fd-rejected', readOnly.json<{ token: string }>().token)).json.destinations[0].attempts[0]).not.toHaveProperty('errorMessage');
    for (const answer of [withPayloads.body, withoutPayloads.body]) expect(answer).not.toContain(API_KEY);
    // In history the output is sealed under the user's key: its words are not there in the clear.
    const history = await decodedWorkflowHistoryText(system, deliveryWorkflowId(source.id, 'fd-logged'));
    expect(history).not.toContain('sending Logged');
    expect(history).not.toContain(API_KEY);

    // The overview counts them where they ended: stopped (skipped, dropped), failed, delivered.
    await waitFor(async () => {
      const overview = await call('GET', `/admin/destinations/${destination.id}/overview`);
      expect(overview.json).toMatchObject({ delivered: 2, failed: 2, filtered: { stopped: 2 } });
    }, 30_000);
  });
});

/**
 * A source function: reads the request's JSON and emits a track and an identify; `mode: retry`
 * asks the receiver first (503 → RetryError), `mode: hang` times out once, `mode: throw` fails.
 */
const SOURCE_CODE = `
var hung = {};
async function onRequest(request, settings) {
  var body = request.json();
  if (body.mode === 'throw') throw new TypeError('cannot read order ' + body.order);
  // The first run of a 'hang' request never settles: it ends as a timeout, and is retried.
  if (body.mode === 'hang' && !hung[body.order]) {
    hung[body.order] = true;
    await new Promise(function () {});
  }
  if (body.mode === 'retry') {
    var answer = await fetch(settings.url + '/upstream', { method: 'POST', body: body.order });
    if (answer.status >= 500) throw new RetryError('upstream answered ' + answer.status);
  }
  console.log('order', body.order, 'key', settings.apiKey);
  Segment.track({ userId: body.user, event: 'Order Placed', properties: { order: body.order, via: request.headers.get('x-via'), q: request.url.searchParams.get('q') } });
  Segment.identify({ userId: body.user, traits: { plan: 'pro' } });
}
`;

describe('a source function', () => {
  const masked = `${'•'.repeat(10)}${API_KEY.slice(-4)}`;
  const post = (url: string, payload: unknown, headers: Record<string, string> = {}) =>
    system.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json', ...headers }, payload: typeof payload === 'string' ? payload : JSON.stringify(payload) });

  async function functionSource() {
    const fn = await call('POST', '/admin/functions', { code: SOURCE_CODE, displayName: 'Orders', resourceType: 'SOURCE', settings: settingDefinitions });
    expect(fn.status).toBe(201);
    const created = await call('POST', '/admin/sources', { name: `source function ${expect.getState().currentTestName ?? ''}`.slice(0, 200), functionId: fn.json.id, settings: { url: receiver.url, apiKey: API_KEY } });
    expect(created.status).toBe(201);
    await system.store.destinations.create(created.json.id, { enabled: true, webhooks: [{ url: `${receiver.url}/dest`, headers: {} }] });
    const webhook = new URL(created.json.webhookUrl);
    return { functionId: fn.json.id as string, source: created.json, path: `${webhook.pathname}${webhook.search}`, body: created.body };
  }

  const delivered = (messageId: string) => receiver.requests.filter((r) => r.path.endsWith('/dest') && r.body.includes(messageId));

  it('answers its webhookUrl at creation, runs onRequest for a request to it and delivers what it emits, once however often it runs', async () => {
    receiver.respond(() => ({ status: 200 }));
    const { functionId, source, path, body } = await functionSource();
    // Segment's form: <base>/functions?b=<base64 of sourceId::writeKey>; the secret masked.
    expect(source).toMatchObject({ functionId, settings: { url: receiver.url, apiKey: masked }, webhookUrl: expect.stringMatching(/^http:\/\/[^/]+\/functions\?b=/) });
    expect(Buffer.from(new URL(source.webhookUrl).searchParams.get('b')!, 'base64').toString()).toBe(`${source.id}::${source.writeKey}`);
    expect(body).not.toContain(API_KEY);
    const read = await call('GET', `/admin/sources/${source.id}`);
    expect(read.json).toMatchObject({ functionId, settings: { apiKey: masked } });
    expect(read.body).not.toContain(API_KEY);
    const destinationFn = await call('POST', '/admin/functions', { code: 'function onTrack() {}', resourceType: 'DESTINATION' });
    for (const [payload, message] of [
      [{ name: 'wrong kind', functionId: destinationFn.json.id }, /^functionId: .* is a DESTINATION function; a source runs a SOURCE function/],
      [{ name: 'no such', functionId: 'sfnc_nope' }, /^functionId: no function sfnc_nope/],
      [{ name: 'missing setting', functionId, settings: { url: receiver.url } }, /^settings\.apiKey: is required by the function/],
    ] as const) {
      const refused = await call('POST', '/admin/sources', payload);
      expect({ payload, status: refused.status, message: refused.json.message }).toEqual({ payload, status: 400, message: expect.stringMatching(message) });
    }

    // Refused at the door, each naming what is wrong; never a 500.
    const tooLarge = await post(path, JSON.stringify({ pad: 'x'.repeat(512 * 1024) }));
    expect(tooLarge.statusCode).toBe(413);
    expect(tooLarge.json().message).toMatch(/^body: is larger than 512 KiB/);
    for (const [url, status, message] of [
      ['/functions', 400, /^b: is required/],
      ['/functions?b=%25%25', 400, /^b: is not base64/],
      ['/functions?b=a&b=b', 400, /^b: /],
      [`/functions?b=${Buffer.from(`${source.id}::wrong-key-0123456789`).toString('base64')}`, 404, /^b: names no source with that key/],
    ] as const) {
      const refused = await post(url, { user: 'u' });
      expect({ url, status: refused.statusCode, message: refused.json().message }).toEqual({ url, status, message: expect.stringMatching(message) });
    }

    // Any content type is the function's to read; none at all is no 5xx either.
    const form = await system.app.inject({ method: 'POST', url: path, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'user=sf-form&order=F-1' });
    expect(form.statusCode).toBe(200);
    const bare = await system.app.inject({ method: 'POST', url: path, payload: Buffer.from('plain') });
    expect(bare.statusCode).toBeLessThan(500);

    const accepted = await post(`${path}&q=hello`, { user: 'sf-user', order: 'A-1' }, { 'x-via': 'shop' });
    expect(accepted.statusCode).toBe(200);
    const { requestId } = accepted.json<{ requestId: string }>();
    expect(await system.client.workflow.getHandle(sourceFunctionWorkflowId(source.id, requestId)).result()).toEqual({ outcome: 'ingested: 2 calls', attempts: 1 });
    const [trackId, identifyId] = [emittedMessageId(requestId, 0), emittedMessageId(requestId, 1)];
    expect(await deliveryResult(system.client, source.id, trackId)).toMatchObject({ ok: true });
    expect(await deliveryResult(system.client, source.id, identifyId)).toMatchObject({ ok: true });
    expect(JSON.parse(delivered(trackId)[0].body)).toMatchObject({ type: 'track', userId: 'sf-user', event: 'Order Placed', properties: { order: 'A-1', via: 'shop', q: 'hello' } });
    expect(JSON.parse(delivered(identifyId)[0].body)).toMatchObject({ type: 'identify', userId: 'sf-user', traits: { plan: 'pro' } });
    // The raw request and the secret are not in the request's workflow history in the clear.
    const history = await decodedWorkflowHistoryText(system, sourceFunctionWorkflowId(source.id, requestId));
    expect(history).not.toContain('A-1');
    expect(history).not.toContain(API_KEY);
    // Ingested, the raw request's own data key is destroyed: its sealed copy in history is unreadable for good.
    if (system.keyring) expect(await system.store.dataKeys.get(requestSubject(requestId))).toBeUndefined();

    // The same request run again (twice, as a re-run would) emits the same messageIds: nothing is delivered twice.
    const again: SourceFunctionRequest = { requestId: `rerun-${requestId}`, sourceId: source.id, receivedAtMs: Date.now(), request: { raw: { headers: {}, body: JSON.stringify({ user: 'sf-user', order: 'B-2' }), url: 'http://127.0.0.1/functions' } }, retry: { retries: 0, initialMs: 1, maximumMs: 1 } };
    for (const run of [1, 2]) {
      const result = await system.client.workflow.execute('runSourceFunctionRequest', { taskQueue: system.config.temporalTaskQueue, workflowId: `rerun-${requestId}-${run}`, args: [again] });
      expect(result).toMatchObject({ outcome: 'ingested: 2 calls' });
      expect(await deliveryResult(system.client, source.id, emittedMessageId(again.requestId, 0))).toMatchObject({ ok: true });
    }
    expect(delivered(emittedMessageId(again.requestId, 0))).toHaveLength(1);
    expect(delivered(emittedMessageId(again.requestId, 1))).toHaveLength(1);
  });

  it("has its emitted calls judged by its source's plan, which forwards what it blocks as it does a sender's calls", async () => {
    receiver.respond(() => ({ status: 200 }));
    const { source, path } = await functionSource();
    const blocked = await system.store.sources.create('source function: blocked events');
    await system.store.destinations.create(blocked.source.id, { enabled: true, webhooks: [{ url: `${receiver.url}/blocked`, headers: {} }] });
    // A plan that knows only "Order Shipped" and blocks unplanned events: the function's "Order Placed" is blocked.
    const plan = await call('POST', '/admin/tracking-plans', { name: 'source function plan' });
    const shipped = { type: 'TRACK', key: 'Order Shipped', version: 1, jsonSchema: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { properties: { type: 'object' } } } };
    expect((await call('PUT', `/admin/tracking-plans/${plan.json.id}/rules`, { rules: [shipped] })).json).toEqual({ status: 'SUCCESS' });
    expect((await call('POST', `/admin/tracking-plans/${plan.json.id}/sources`, { sourceId: source.id })).status).toBe(201);
    expect((await call('PATCH', `/admin/sources/${source.id}/settings`, { track: { allowUnplannedEvents: false }, forwardingBlockedEventsTo: blocked.source.id })).status).toBe(200);

    const accepted = await post(path, { user: 'sf-planned', order: 'P-1' });
    expect(accepted.statusCode).toBe(200);
    const { requestId } = accepted.json<{ requestId: string }>();
    expect(await system.client.workflow.getHandle(sourceFunctionWorkflowId(source.id, requestId)).result()).toEqual({ outcome: 'ingested: 2 calls', attempts: 1 });
    const [trackId, identifyId] = [emittedMessageId(requestId, 0), emittedMessageId(requestId, 1)];
    // The identify is not the plan's business and is delivered; the blocked track goes to the blocked-events source only.
    expect(await deliveryResult(system.client, source.id, identifyId)).toMatchObject({ ok: true });
    expect(await hasDeliveryWorkflow(system.client, source.id, trackId)).toBe(false);
    // Forwarding is a durable job of its own: its delivery into the blocked-events source starts when the job ingests it.
    await waitFor(() => {
      if (!receiver.requests.some((r) => r.path.endsWith('/blocked') && r.body.includes(trackId))) throw new Error('the blocked track has not been forwarded yet');
    }, 30_000);
    expect(await deliveryResult(system.client, blocked.source.id, trackId)).toMatchObject({ ok: true });
    const forwarded = receiver.requests.filter((r) => r.path.endsWith('/blocked'));
    expect(forwarded.map((r) => JSON.parse(r.body))).toEqual([expect.objectContaining({ messageId: trackId, event: 'Order Placed', userId: 'sf-planned' })]);
  });

  it('retries a RetryError and a timeout on its schedule until it succeeds, and fails a throw, listed with its error for payloads:read only', async () => {
    let upstream = 0;
    receiver.respond((request) => (request.path.endsWith('/upstream') && ++upstream === 1 ? { status: 503 } : { status: 200 }));
    const { source, path } = await functionSource();
    const retried = await post(path, { user: 'sf-retry', order: 'R-1', mode: 'retry' });
    const failed = await post(path, { user: 'sf-throw', order: 'T-1', mode: 'throw' });
    const hung = await post(path, { user: 'sf-hang', order: 'H-1', mode: 'hang' });
    expect([retried.statusCode, failed.statusCode, hung.statusCode]).toEqual([200, 200, 200]);
    const outcome = (answer: typeof retried) => system.client.workflow.getHandle(sourceFunctionWorkflowId(source.id, answer.json<{ requestId: string }>().requestId)).result();
    expect(await outcome(retried)).toEqual({ outcome: 'ingested: 2 calls', attempts: 2 });
    expect(await outcome(hung)).toEqual({ outcome: 'ingested: 2 calls', attempts: 2 });
    expect(await deliveryResult(system.client, source.id, emittedMessageId(retried.json().requestId, 0))).toMatchObject({ ok: true });
    // Any other error fails the request at once, not retried; nothing it emitted is sent.
    expect(await outcome(failed)).toEqual({ outcome: 'function:error: TypeError', attempts: 1 });
    expect(delivered(emittedMessageId(failed.json().requestId, 0))).toHaveLength(0);

    const list = async (scopes: string[]) => {
      const token = await system.app.inject({ method: 'POST', url: '/admin/tokens', headers: admin, payload: { name: `function requests ${scopes.join(' ')}`, scopes } });
      const response = await system.app.inject({ method: 'GET', url: `/admin/sources/${source.id}/function-requests`, headers: { authorization: `Bearer ${token.json<{ token: string }>().token}` } });
      expect(response.statusCode).toBe(200);
      return { json: response.json(), body: response.body };
    };
    const withPayloads = await list(['read', 'payloads:read']);
    expect(withPayloads.json.requests).toEqual([
      expect.objectContaining({
        id: failed.json().requestId,
        reason: 'function:error: TypeError',
        error: { type: 'TypeError', message: 'cannot read order T-1' },
        request: expect.objectContaining({ body: JSON.stringify({ user: 'sf-throw', order: 'T-1', mode: 'throw' }) }),
      }),
    ]);
    // The error is user data (a function writes it from the request): only the reason without payloads:read.
    const metadataOnly = await list(['read']);
    expect(metadataOnly.json.requests).toEqual([expect.objectContaining({ id: failed.json().requestId, reason: 'function:error: TypeError' })]);
    expect(metadataOnly.body).not.toContain('T-1');
    expect(metadataOnly.json.requests[0]).not.toHaveProperty('error');

    // A DELETE regulation reaches the failed requests that name its users (a value of the request), and only those.
    const kept = await post(path, { user: 'sf-kept', order: 'K-1', mode: 'throw' });
    expect(await outcome(kept)).toEqual({ outcome: 'function:error: TypeError', attempts: 1 });
    const regulation = await system.app.inject({ method: 'POST', url: '/admin/regulations', headers: admin, payload: { regulationType: 'DELETE', subjectType: 'USER_ID', subjectIds: ['sf-throw'] } });
    expect(regulation.statusCode).toBe(201);
    const after = await list(['read', 'payloads:read']);
    expect(after.json.requests.map((r: { id: string }) => r.id)).toEqual([kept.json().requestId]);
    expect(after.body).not.toContain('T-1');
    // Its key is gone too: the sealed copy in the request's workflow history cannot be opened again.
    if (system.keyring) expect(await system.store.dataKeys.get(requestSubject(failed.json().requestId))).toBeUndefined();
  });
});

/** One handler per disposition; screen has none (EventNotSupported). */
const DISPOSITIONS_CODE = `
var slowSeen = false;
async function onTrack(event, settings) {
  // The first 'Slow' call never settles: the invocation ends at FUNCTION_TIMEOUT, and is retried.
  if (event.event === 'Slow' && !slowSeen) {
    slowSeen = true;
    await new Promise(function () {});
  }
  console.log('sending', event.event, 'with', settings.apiKey);
  await fetch(settings.url + '/logged', { method: 'POST', body: JSON.stringify({ messageId: event.messageId }) });
}
async function onIdentify(event) { throw new InvalidEventPayload('no email for ' + event.userId); }
async function onPage() { throw new DropEvent('not wanted'); }
async function onGroup() { throw new TypeError('boom'); }
`;

/**
 * Insert functions: an INSERT_DESTINATION function attached to a webhooks or actions destination
 * (at most one each); its handler runs on the event the destination's filters let through, and the
 * event it returns is what the mapping renders and what is signed and sent.
 */
const insertSettings = [
  { name: 'tag', label: 'Tag', description: 'Added to the event', type: 'STRING', required: true, sensitive: false },
  { name: 'token', label: 'Token', description: 'Secret', type: 'STRING', required: true, sensitive: true },
  { name: 'url', label: 'URL', description: 'Where the function reports it ran', type: 'STRING', required: false, sensitive: false },
];
const INSERT_TOKEN = 'insert-secret-token-5d2e81';
const maskedToken = `${'•'.repeat(10)}${INSERT_TOKEN.slice(-4)}`;

/** Adds the version's mark and the tag to a track event (and reports each call); drops pages; rejects identifies. */
const insertCode = (version: string) => `
async function onTrack(event, settings) {
  if (settings.url) await fetch(settings.url + '/called', { method: 'POST', body: JSON.stringify({ messageId: event.messageId }) });
  console.log('enriching', event.event, 'with', settings.token);
  event.properties = Object.assign({}, event.properties, { enriched: settings.tag, version: '${version}' });
  return event;
}
async function onPage() { throw new DropEvent('not wanted'); }
async function onIdentify(event) { throw new InvalidEventPayload('no email for ' + event.userId); }
`;

async function insertFunction(code: string) {
  const fn = await call('POST', '/admin/functions', { code, resourceType: 'INSERT_DESTINATION', settings: insertSettings });
  expect(fn.status).toBe(201);
  return fn.json.id as string;
}

describe('an insert function instance', () => {
  it('is created on one destination in Segment\'s alpha shape, at most one per destination, its secrets masked, every refusal naming the field', async () => {
    const functionId = await insertFunction(insertCode('crud'));
    const { source } = await system.store.sources.create('insert function crud');
    const webhooks = await call('POST', `/admin/sources/${source.id}/destinations`, { enabled: true, webhooks: [{ url: `${receiver.url}/crud` }] });
    const body = { functionId: functionId.slice('ifnd_'.length), integrationId: webhooks.json.id, enabled: true, name: 'Enrich', settings: { tag: 't1' }, encryptedSettings: { token: INSERT_TOKEN } };
    const created = await call('POST', '/admin/insert-function-instances', body);
    expect(created).toMatchObject({ status: 201, json: { id: expect.stringMatching(/^ifi_/), name: 'Enrich', integrationId: webhooks.json.id, classId: functionId, enabled: true, settings: { tag: 't1' }, encryptedSettings: { token: maskedToken } } });
    const id = created.json.id as string;
    const read = await call('GET', `/admin/insert-function-instances/${id}`);
    expect(read.json).toEqual(created.json);
    expect((await call('GET', `/admin/insert-function-instances?functionId=${functionId}`)).json).toEqual({ insertFunctionInstances: [created.json] });
    // What GET answers saves back unchanged: the masked secret keeps its value.
    const saved = await call('PATCH', `/admin/insert-function-instances/${id}`, { ...read.json, enabled: false });
    expect(saved).toMatchObject({ status: 200, json: { enabled: false, encryptedSettings: { token: maskedToken } } });
    expect((await system.store.destinations.get(webhooks.json.id))?.insertFunction).toMatchObject({ id, enabled: false, settings: { tag: 't1', token: INSERT_TOKEN } });
    for (const answer of [created.body, read.body, saved.body]) expect(answer).not.toContain(INSERT_TOKEN);
    const audit = await system.store.audit.list({ target: id, limit: 10 });
    expect(audit.map((e) => e.action).sort()).toEqual(['insert_function_instance.create', 'insert_function_instance.update']);

    // A second instance on the same destination: 409 naming the field.
    const second = await call('POST', '/admin/insert-function-instances', body);
    expect(second).toMatchObject({ status: 409, json: { message: expect.stringMatching(/^integrationId: destination .* already has insert function instance/) } });
    const dfn = await call('POST', '/admin/functions', { code: 'function onTrack() {}', resourceType: 'DESTINATION' });
    const fnDestination = await call('POST', `/admin/sources/${source.id}/destinations`, { type: 'function', enabled: true, functionId: dfn.json.id, settings: {} });
    const other = await call('POST', `/admin/sources/${source.id}/destinations`, { enabled: true, webhooks: [{ url: `${receiver.url}/crud2` }] });
    const refusals: [Record<string, unknown>, RegExp][] = [
      [{ ...body, integrationId: other.json.id, functionId: dfn.json.id }, /^functionId: dfn_\w+ is a DESTINATION function; an insert function instance runs an INSERT_DESTINATION function/],
      [{ ...body, integrationId: other.json.id, functionId: 'ifnd_000000000000000000000000' }, /^functionId: no function/],
      [{ ...body, integrationId: 'dst_missing' }, /^integrationId: no destination dst_missing/],
      [{ ...body, integrationId: fnDestination.json.id }, /^integrationId: .* is a function destination/],
      [{ ...body, integrationId: other.json.id, encryptedSettings: {} }, /^settings\.token: is required by the function/],
      [{ ...body, integrationId: other.json.id, settings: { tag: 1 } }, /^settings\.tag: must be a string/],
      [{ ...body, integrationId: other.json.id, settings: { tag: 't', token: 'x' } }, /^encryptedSettings\.token: is also in settings/],
      [{ functionId, integrationId: other.json.id, settings: { tag: 't', token: 'x' } }, /enabled/],
    ];
    for (const [refused, message] of refusals) {
      const answer = await call('POST', '/admin/insert-function-instances', refused);
      expect({ refused, status: answer.status, message: answer.json.message }).toEqual({ refused, status: 400, message: expect.stringMatching(message) });
    }
    expect((await call('PATCH', `/admin/insert-function-instances/${id}`, { integrationId: other.json.id })).json.message).toMatch(/^integrationId: an instance stays on its destination/);
    expect((await system.app.inject({ method: 'DELETE', url: `/admin/insert-function-instances/${id}`, headers: admin })).statusCode).toBe(204);
    expect((await call('GET', `/admin/insert-function-instances/${id}`)).status).toBe(404);
    expect((await system.store.destinations.get(webhooks.json.id))?.insertFunction).toBeUndefined();
  });

  it('sends what it returned through a webhooks and an actions destination, on the version the delivery started with; a filtered message never calls it', async () => {
    const functionId = await insertFunction(insertCode('v1'));
    const { source, writeKey } = await system.store.sources.create('insert function delivery');
    const secret = 'insert-shared-secret';
    const webhooks = await call('POST', `/admin/sources/${source.id}/destinations`, { enabled: true, sharedSecret: secret, webhooks: [{ url: `${receiver.url}/ifn-webhook` }] });
    const actions = await call('POST', `/admin/sources/${source.id}/destinations`, {
      type: 'actions',
      enabled: true,
      mappings: [{ name: 'Orders', enabled: true, trigger: 'type = "track"', settings: { url: `${receiver.url}/ifn-actions`, method: 'POST', data: { id: { '@path': '$.messageId' }, enriched: { '@path': '$.properties.enriched' }, version: { '@path': '$.properties.version' } } } }],
    });
    for (const destination of [webhooks, actions]) {
      const instance = await call('POST', '/admin/insert-function-instances', { functionId, integrationId: destination.json.id, enabled: true, settings: { tag: 'gold', url: receiver.url }, encryptedSettings: { token: INSERT_TOKEN } });
      expect(instance.status).toBe(201);
    }
    // A destination filter drops 'Filtered' for the webhooks destination: its insert function never sees it.
    expect((await call('POST', `/admin/destinations/${webhooks.json.id}/filters`, { title: 'No filtered', enabled: true, if: "event = 'Filtered'", actions: [{ type: 'DROP' }] })).status).toBe(201);

    // The webhook's first answer is a slow 503: v2 is deployed while it waits; the retry still runs v1.
    let slowed = false;
    receiver.respond((request) => {
      if (request.path !== '/hook/ifn-webhook' || slowed) return { status: 200 };
      slowed = true;
      return { status: 503, delayMs: 1_500 };
    });
    await send(system.app, writeKey, 'track', { userId: 'u1', event: 'Order Completed', messageId: 'ifn-order', properties: { total: 3 } });
    await waitFor(() => {
      if (!receiver.requests.some((r) => r.path === '/hook/ifn-webhook')) throw new Error('the first attempt has not reached the receiver');
    }, 20_000);
    expect((await call('PATCH', `/admin/functions/${functionId}`, { code: insertCode('v2') })).status).toBe(200);
    expect((await call('POST', `/admin/functions/${functionId}/deploy`, {})).json).toMatchObject({ deployedVersion: 2 });
    const result = await deliveryResult(system.client, source.id, 'ifn-order');
    expect(result).toMatchObject({ ok: true });
    expect(result.report?.destinations).toEqual(expect.arrayContaining([expect.objectContaining({ destinationId: webhooks.json.id, status: 'delivered', rounds: 2 })]));

    const sent = receiver.requests.filter((r) => r.path === '/hook/ifn-webhook' && r.body.includes('ifn-order'));
    expect(sent).toHaveLength(2);
    for (const request of sent) {
      // The event it returned is what was signed and sent, every field the sender sent kept.
      expect(JSON.parse(request.body)).toMatchObject({ messageId: 'ifn-order', event: 'Order Completed', properties: { total: 3, enriched: 'gold', version: 'v1' } });
      expect(request.headers['x-signature']).toBe(signBody(secret, request.body));
    }
    const mapped = receiver.requests.filter((r) => r.path === '/hook/ifn-actions');
    expect(mapped.map((r) => JSON.parse(r.body))).toEqual([{ id: 'ifn-order', enriched: 'gold', version: 'v1' }]);
    // Its console output is with the attempt, sealed (payloads:read), the secret masked; never in history in the clear.
    const detail = await call('GET', `/admin/sources/${source.id}/deliveries/ifn-order`);
    const webhookDetail = detail.json.destinations.find((d: { destinationId: string }) => d.destinationId === webhooks.json.id);
    expect(webhookDetail.attempts[0]).toMatchObject({ logs: [`log: enriching Order Completed with ${maskedToken}`] });
    const history = await decodedWorkflowHistoryText(system, deliveryWorkflowId(source.id, 'ifn-order'));
    expect(history).not.toContain(INSERT_TOKEN);
    expect(history).not.toContain('enriching');

    // DropEvent: not sent, counted filtered; InvalidEventPayload: failed at once; a filtered message: no call.
    await send(system.app, writeKey, 'page', { userId: 'u1', name: 'Home', messageId: 'ifn-dropped' });
    await send(system.app, writeKey, 'identify', { userId: 'u-bad', messageId: 'ifn-rejected' });
    await send(system.app, writeKey, 'track', { userId: 'u1', event: 'Filtered', messageId: 'ifn-filtered' });
    const dropped = await deliveryResult(system.client, source.id, 'ifn-dropped');
    expect(dropped.report?.destinations).toEqual([expect.objectContaining({ destinationId: webhooks.json.id, status: 'stopped', reason: 'function:dropped: DropEvent' })]);
    const rejected = await deliveryResult(system.client, source.id, 'ifn-rejected');
    expect(rejected.report?.destinations).toEqual([expect.objectContaining({ destinationId: webhooks.json.id, status: 'failed', rounds: 1, reason: expect.stringContaining('function:rejected: InvalidEventPayload') })]);
    // The filtered message went to the actions destination only, through v2 there.
    const filtered = await deliveryResult(system.client, source.id, 'ifn-filtered');
    expect(filtered.report?.destinations).toEqual([expect.objectContaining({ destinationId: actions.json.id, status: 'delivered' })]);
    expect(receiver.requests.filter((r) => r.path === '/hook/ifn-actions').map((r) => JSON.parse(r.body))).toContainEqual({ id: 'ifn-filtered', enriched: 'gold', version: 'v2' });
    expect(receiver.requests.filter((r) => r.path === '/hook/called' && r.body.includes('ifn-filtered'))).toHaveLength(1);
    expect(receiver.requests.filter((r) => ['/hook/ifn-webhook'].includes(r.path) && /ifn-(dropped|rejected|filtered)/.test(r.body))).toEqual([]);
    await waitFor(async () => {
      const overview = await call('GET', `/admin/destinations/${webhooks.json.id}/overview`);
      expect(overview.json).toMatchObject({ delivered: 1, failed: 1, filtered: { stopped: 1 } });
    }, 30_000);
  });

  it("is not run while its destination is paused, only when the held message is sent", async () => {
    const functionId = await insertFunction(insertCode('paused'));
    const { source, writeKey } = await system.store.sources.create('insert function paused');
    const destination = await call('POST', `/admin/sources/${source.id}/destinations`, { enabled: true, paused: true, webhooks: [{ url: `${receiver.url}/ifn-paused` }] });
    expect((await call('POST', '/admin/insert-function-instances', { functionId, integrationId: destination.json.id, enabled: true, settings: { tag: 'held', token: INSERT_TOKEN, url: receiver.url } })).status).toBe(201);
    await send(system.app, writeKey, 'track', { userId: 'u1', event: 'Order Completed', messageId: 'ifn-paused' });
    // Held: the delivery waits on a timer for the resume, having asked once.
    await waitFor(async () => {
      const { events } = await system.client.workflow.getHandle(deliveryWorkflowId(source.id, 'ifn-paused')).fetchHistory();
      if (!events?.some((e) => e.timerStartedEventAttributes)) throw new Error('the delivery is not held yet');
    }, 20_000);
    const calls = () => receiver.requests.filter((r) => r.path === '/hook/called' && r.body.includes('ifn-paused'));
    expect(calls()).toEqual([]);
    expect((await call('PATCH', `/admin/destinations/${destination.json.id}`, { paused: false })).status).toBe(200);
    expect(await deliveryResult(system.client, source.id, 'ifn-paused')).toMatchObject({ ok: true });
    expect(calls()).toHaveLength(1);
    expect(JSON.parse(receiver.requests.find((r) => r.path === '/hook/ifn-paused')!.body)).toMatchObject({ properties: { enriched: 'held', version: 'paused' } });
  });
});
