import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import type { Receiver } from '../helpers/receiver';
import { basicAuth, deliveryResult, sourceWithDestination, useSystem, type TestSystem } from '../helpers/system';

/**
 * Segment's mobile libraries, as they talk on the wire (analytics-swift HTTPClient/MemoryStore,
 * analytics-kotlin HTTPClient/EventPipeline): settings from `https://{cdnHost}/projects/{writeKey}/settings`
 * with cdnHost `…/v1`, then batch files `{"batch":[…],"sentAt":…,"writeKey":…}` posted to `{apiHost}/b`.
 */
let system: TestSystem;
let receiver: Receiver;
let host: string;
useSystem((s, r) => {
  system = s;
  receiver = r;
});
beforeAll(async () => {
  await system.app.listen({ port: 0, host: '127.0.0.1' });
  host = `127.0.0.1:${(system.app.server.address() as AddressInfo).port}`;
});

const SWIFT_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'user-agent': 'analytics-ios/1.7.3', 'accept-encoding': 'gzip' };
const KOTLIN_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'user-agent': 'analytics-kotlin/1.19.1' };

/** The app's clock runs an hour behind: the delivered timestamp must be corrected with sentAt. */
const CLIENT_SKEW_MS = -3_600_000;
const clientNow = () => new Date(Date.now() + CLIENT_SKEW_MS);

function mobileContext(library: { name: string; version: string }, os: string) {
  return {
    app: { name: 'Shop', version: '3.2.1', build: '321', namespace: 'com.example.shop' },
    device: { id: 'dev-1', manufacturer: 'Apple', model: 'iPhone15,2', type: os === 'iOS' ? 'ios' : 'android' },
    os: { name: os, version: '17.4' },
    library,
    locale: 'en-US',
    network: { wifi: true },
    screen: { width: 393, height: 852 },
    timezone: 'Europe/Berlin',
  };
}

/** A mixed batch as the libraries store it: each event with messageId, its own (skewed) timestamp and the full mobile context. */
function mobileBatch(prefix: string, library: { name: string; version: string }, os: string) {
  const context = mobileContext(library, os);
  const at = (secondsAgo: number) => new Date(clientNow().getTime() - secondsAgo * 1000).toISOString();
  const anonymousId = randomUUID();
  return [
    { type: 'identify', messageId: `${prefix}-identify`, anonymousId, userId: `${prefix}-user`, traits: { plan: 'Premium' }, timestamp: at(5), context, integrations: {} },
    { type: 'track', messageId: `${prefix}-track`, anonymousId, userId: `${prefix}-user`, event: 'Order Completed', properties: { total: 42 }, timestamp: at(4), context, integrations: {} },
    { type: 'screen', messageId: `${prefix}-screen`, anonymousId, userId: `${prefix}-user`, name: 'Cart', category: 'Checkout', properties: {}, timestamp: at(3), context, integrations: {} },
    { type: 'group', messageId: `${prefix}-group`, anonymousId, userId: `${prefix}-user`, groupId: 'acme', traits: { name: 'Acme' }, timestamp: at(2), context, integrations: {} },
    { type: 'alias', messageId: `${prefix}-alias`, anonymousId, userId: `${prefix}-user`, previousId: anonymousId, timestamp: at(1), context, integrations: {} },
  ];
}

/** Exactly the bytes the libraries write: `{ "batch": [` + events joined by commas + `],"sentAt":…,"writeKey":…}`. */
const batchFile = (events: object[], writeKey: string) =>
  `{ "batch": [${events.map((e) => JSON.stringify(e)).join(',')}],"sentAt":"${clientNow().toISOString()}","writeKey":"${writeKey}"}`;

async function expectDeliveredOnceWithCorrectedTimestamps(sourceId: string, events: { messageId: string; timestamp: string }[], sentAtSkewCheck: (body: Record<string, unknown>) => void) {
  for (const { messageId } of events) {
    expect(await deliveryResult(system.client, sourceId, messageId)).toMatchObject({ ok: true });
  }
  // Every workflow has closed: whatever reached the receiver is all that ever will.
  for (const event of events) {
    const copies = receiver.requests.filter((r) => (JSON.parse(r.body) as { messageId?: string }).messageId === event.messageId);
    expect(copies).toHaveLength(1);
    const body = JSON.parse(copies[0].body) as Record<string, unknown>;
    sentAtSkewCheck(body);
    // receivedAt − (sentAt − timestamp): the app's hour of skew is gone, the gap between event and send kept.
    const sentAtMinusTimestamp = Date.parse(events[events.length - 1].timestamp) + 1000 - Date.parse(event.timestamp);
    expect(Math.abs(Date.parse(body.receivedAt as string) - Date.parse(body.timestamp as string) - sentAtMinusTimestamp)).toBeLessThan(1_500);
  }
}

it('serves the settings route the way analytics-swift and analytics-kotlin fetch it, naming this host as apiHost', async () => {
  const { writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
  for (const headers of [SWIFT_HEADERS, KOTLIN_HEADERS]) {
    const response = await fetch(`http://${host}/v1/projects/${writeKey}/settings`, { headers });
    expect(response.status).toBe(200);
    const settings = (await response.json()) as { integrations: Record<string, Record<string, unknown>> };
    expect(settings.integrations['Segment.io']).toMatchObject({ apiKey: writeKey, apiHost: `${host}/v1`, protocol: 'http' });
  }
  const unknown = await fetch(`http://${host}/v1/projects/not-a-key/settings`, { headers: SWIFT_HEADERS });
  expect(unknown.status).toBe(404);
  expect(await unknown.json()).toEqual({ code: 'unknown_write_key', message: 'writeKey: no source has this write key; settings are served only for the write key of an existing source' });
});

it('delivers once every message of an analytics-swift batch (Basic auth, application/json), timestamps corrected with sentAt', async () => {
  const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
  const events = mobileBatch(`swift-${randomUUID()}`, { name: 'analytics-swift', version: '1.7.3' }, 'iOS');
  const response = await fetch(`http://${host}/v1/b`, { method: 'POST', headers: { ...SWIFT_HEADERS, authorization: basicAuth(writeKey) }, body: batchFile(events, writeKey) });
  expect(response.status).toBe(200);
  await expectDeliveredOnceWithCorrectedTimestamps(source.id, events, (body) => {
    expect(body.context).toMatchObject({ ...mobileContext({ name: 'analytics-swift', version: '1.7.3' }, 'iOS'), ip: '127.0.0.1' });
  });
  const screen = JSON.parse(receiver.requests.find((r) => r.body.includes(events[2].messageId))!.body);
  expect(screen).toMatchObject({ type: 'screen', name: 'Cart', userId: events[2].userId });
});

it('delivers once every message of an analytics-kotlin batch (gzip text/plain, chunked, write key in the body)', async () => {
  const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
  const events = mobileBatch(`kotlin-${randomUUID()}`, { name: 'analytics-kotlin', version: '1.19.1' }, 'Android');
  const gzipped = gzipSync(batchFile(events, writeKey));
  // A ReadableStream body has no Content-Length: sent chunked, as HttpURLConnection's setChunkedStreamingMode does.
  const body = new ReadableStream({ start: (controller) => (controller.enqueue(gzipped), controller.close()) });
  const response = await fetch(`http://${host}/v1/b`, {
    method: 'POST',
    headers: { 'content-type': 'text/plain', 'content-encoding': 'gzip', 'user-agent': 'analytics-kotlin/1.19.1' },
    body,
    duplex: 'half',
  });
  expect(response.status).toBe(200);
  await expectDeliveredOnceWithCorrectedTimestamps(source.id, events, (delivered) => {
    expect(delivered.context).toMatchObject({ library: { name: 'analytics-kotlin' }, os: { name: 'Android' }, ip: '127.0.0.1' });
  });
});

it('a text/plain body meets the same strict JSON rules and write-key check as application/json', async () => {
  const { writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
  const post = (body: string) => fetch(`http://${host}/v1/b`, { method: 'POST', headers: { 'content-type': 'text/plain', authorization: basicAuth(writeKey) }, body });
  const deep = await post(`{"batch":[{"type":"track","userId":"u","event":"E","properties":${'['.repeat(70)}${']'.repeat(70)}}]}`);
  expect(deep.status).toBe(400);
  expect(((await deep.json()) as { message: string }).message).toBe('body nests objects and arrays deeper than 64 levels');
  const poisoned = await post('{"batch":[{"type":"track","userId":"u","event":"E","__proto__":{"x":1}}]}');
  expect(poisoned.status).toBe(400);
  const missing = await post('{"batch":[{"type":"track","userId":"u"}]}');
  expect(await missing.json()).toEqual({ code: 'invalid_request', message: 'batch[0].event: is required for track calls' });
  const unknownKey = await fetch(`http://${host}/v1/b`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{"writeKey":"nope","batch":[{"type":"track","userId":"u","event":"E"}]}' });
  expect(unknownKey.status).toBe(401);
});
