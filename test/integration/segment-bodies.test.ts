import { startReceiver, type Receiver } from '../helpers/receiver';
import { ADMIN_TOKEN, deliveryResult, send, startSystem, type TestSystem } from '../helpers/system';

/**
 * Bodies as Segment sends them, through the real API, Temporal, the run's worker and receivers: a
 * `{"@path": "$."}` mapping delivers the event as Segment's pipeline holds it (every field the sender
 * sent, timestamps as Segment computes them, no `version`); the preview renders exactly that body;
 * the classic webhook body keeps the seed's shape; `integrations` keys name each kind as Segment does.
 */
let system: TestSystem;
const receivers: Receiver[] = [];
const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
beforeAll(async () => {
  system = await startSystem();
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await system.close();
});

const admin = (method: 'GET' | 'POST', url: string, payload?: unknown) => system.app.inject({ method, url, headers: auth, ...(payload !== undefined && { payload: payload as Record<string, unknown> }) });

/** A source with a classic webhook destination and a Webhooks (Actions) destination whose one mapping is `{"@path": "$."}`. */
async function sourceWithBothKinds(name: string) {
  const classic = await startReceiver();
  const actions = await startReceiver();
  receivers.push(classic, actions);
  const { source, writeKey } = await system.store.sources.create(`bodies: ${name}`);
  const made = await admin('POST', `/admin/sources/${source.id}/destinations`, { enabled: true, webhooks: [{ url: classic.url }] });
  expect(made.statusCode).toBe(201);
  const mapped = await admin('POST', `/admin/sources/${source.id}/destinations`, {
    type: 'actions',
    enabled: true,
    mappings: [{ name: 'Everything', enabled: true, trigger: 'all', settings: { url: actions.url, method: 'POST', data: { '@path': '$.' } } }],
  });
  expect(mapped.statusCode).toBe(201);
  return { source, writeKey, classic, actions, actionsId: mapped.json<{ id: string }>().id };
}

it('delivers the event as Segment holds it to {"@path": "$."}, the same body the preview renders; the classic body keeps its shape', async () => {
  const { source, writeKey, classic, actions, actionsId } = await sourceWithBothKinds('path root');
  const sent = {
    messageId: 'bodies-1',
    userId: 'u1',
    event: 'Order Completed',
    properties: { total: 42 },
    context: { library: { name: 'analytics-node', version: '2.1.0' } },
    channel: 'server',
    integrations: { Mixpanel: false },
    _metadata: { nodeVersion: '20.18.1' },
    shopRegion: 'eu',
    timestamp: '2026-01-01T00:00:00.000Z',
    sentAt: '2026-01-01T00:00:01.000Z',
  };
  await send(system.app, writeKey, 'track', sent);
  expect(await deliveryResult(system.client, source.id, 'bodies-1')).toMatchObject({ ok: true });
  const delivered = JSON.parse((await actions.waitForMessage('bodies-1')).body) as Record<string, unknown>;
  const receivedAt = delivered.receivedAt as string;
  // timestamp = receivedAt − (sentAt − originalTimestamp): the client's one second of skew taken off.
  expect(delivered).toEqual({
    type: 'track',
    ...sent,
    timestamp: new Date(Date.parse(receivedAt) - 1_000).toISOString(),
    originalTimestamp: '2026-01-01T00:00:00.000Z',
    receivedAt,
    context: { ...sent.context, ip: expect.any(String) },
  });
  expect(delivered).not.toHaveProperty('version');

  const classicBody = JSON.parse((await classic.waitForMessage('bodies-1')).body) as Record<string, unknown>;
  expect(Object.keys(classicBody).sort()).toEqual(['context', 'event', 'messageId', 'properties', 'receivedAt', 'timestamp', 'type', 'userId', 'version']);
  expect(classicBody).toMatchObject({ version: 1, timestamp: delivered.timestamp, receivedAt });

  // The preview of the same call, arriving when it did (an event copied with its receivedAt), renders exactly what was sent.
  const preview = await admin('POST', `/admin/destinations/${actionsId}/mappings/preview`, { event: { type: 'track', ...sent, receivedAt, context: delivered.context } });
  expect(preview.statusCode).toBe(200);
  expect(preview.json().mappings[0].request.body).toEqual(delivered);
});

it.each([
  ['{"Webhooks (Actions)": false}', { 'Webhooks (Actions)': false }, { classic: true, actions: false }],
  ['{"Webhooks": false}', { Webhooks: false }, { classic: false, actions: true }],
  ['{"All": false, "Webhooks (Actions)": true}', { All: false, 'Webhooks (Actions)': true }, { classic: false, actions: true }],
  ['{"All": false, "Webhooks": true}', { All: false, Webhooks: true }, { classic: true, actions: false }],
])('integrations %s reaches the kinds Segment would send it to', async (label, integrations, reaches) => {
  const { source, writeKey, classic, actions } = await sourceWithBothKinds(label);
  const messageId = `integrations-${Object.entries(reaches)
    .map(([k, v]) => `${k}-${v}`)
    .join('-')}-${Date.now()}`;
  await send(system.app, writeKey, 'track', { userId: 'u1', event: 'E', messageId, integrations });
  expect(await deliveryResult(system.client, source.id, messageId)).toMatchObject({ ok: true });
  // The workflow has ended: every destination it was for has been sent to by now.
  const got = (r: Receiver) => r.requests.some((q) => q.body.includes(messageId));
  expect({ classic: got(classic), actions: got(actions) }).toEqual(reaches);
});
