import { startReceiver, type Receiver } from '../helpers/receiver';
import { ADMIN_TOKEN, deliveryResult, send, startSystem, type TestSystem } from '../helpers/system';

/**
 * Destinations in Segment's shape, through the real API, Temporal, the run's worker and receivers:
 * classic Webhooks and Webhooks (Actions) are created from what Segment exports (settings an object
 * or Terraform's JSON string) and deliver; any other catalog destination is a 422 naming it; every
 * field of an exported subscription is accepted, and Segment's internal directives are refused
 * saying what they are and what would be lost.
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

const create = (sourceId: string, body: unknown) => system.app.inject({ method: 'POST', url: `/admin/sources/${sourceId}/destinations`, headers: auth, payload: body as Record<string, unknown> });
async function receiver() {
  const r = await startReceiver();
  receivers.push(r);
  return r;
}

it("creates a classic Webhooks destination from Terraform's segment_destination and delivers the seed's body to it", async () => {
  const r = await receiver();
  const { source, writeKey } = await system.store.sources.create('segment classic');
  const made = await create(source.id, {
    enabled: true,
    metadata: { contacts: null, id: '54521fdc25e721e32a72ef04', partner_owned: false, region_endpoints: null, supported_regions: null },
    name: 'Webhooks',
    settings: JSON.stringify({ globalHook: r.url, hooks: [{ headers: [{ key: 'X-Team', value: 'orders' }], hook: r.url }], sharedSecret: 'segment-classic-secret' }),
    source_id: 'b1TTjVj38UH445ezhJU3Y6',
  });
  expect(made.statusCode).toBe(201);
  expect(made.json()).toMatchObject({ type: 'webhooks', name: 'Webhooks', enabled: true, sharedSecretSet: true, webhooks: [{ url: r.url, headerNames: ['X-Team'] }] });
  expect(made.body).not.toContain('segment-classic-secret');
  await send(system.app, writeKey, 'track', { userId: 'u1', event: 'E', messageId: 'segment-classic-1' });
  expect(await deliveryResult(system.client, source.id, 'segment-classic-1')).toMatchObject({ ok: true });
  const got = await r.waitForMessage('segment-classic-1');
  expect(JSON.parse(got.body)).toMatchObject({ version: 1, type: 'track' });
  expect(got.headers['x-team']).toBe('orders');
});

it('creates a Webhooks (Actions) destination from the Public API shape with its exported subscriptions (batch_size 0 beside enable_batching false)', async () => {
  const r = await receiver();
  const { source, writeKey } = await system.store.sources.create('segment actions');
  const made = await create(source.id, {
    sourceId: 'qaHm2cZ9vTbX8kLp',
    metadataId: '614a3c7d791c91c41bae7599',
    name: 'Webhooks (Actions)',
    enabled: true,
    settings: { sharedSecret: 'segment-actions-secret' },
    mappings: [
      {
        id: 'sub1',
        actionId: 'act1',
        actionSlug: 'send',
        modelId: null,
        destinationId: '6364eacc13816c38bfb34981',
        name: 'Orders',
        enabled: true,
        trigger: 'type = "track"',
        settings: { url: `${r.url}/orders`, method: 'POST', data: { '@path': '$.' }, enable_batching: false, batch_size: 0 },
      },
    ],
  });
  expect(made.statusCode).toBe(201);
  expect(made.json()).toMatchObject({ type: 'actions', name: 'Webhooks (Actions)', sharedSecretSet: true, mappings: [{ name: 'Orders' }] });
  await send(system.app, writeKey, 'track', { userId: 'u1', event: 'E', messageId: 'segment-actions-1', channel: 'server' });
  expect(await deliveryResult(system.client, source.id, 'segment-actions-1')).toMatchObject({ ok: true });
  expect(JSON.parse((await r.waitForMessage('segment-actions-1')).body)).toMatchObject({ type: 'track', channel: 'server' });
});

it('names what a Segment-shaped create changes (a fan-out to every hook becomes ordered failover)', async () => {
  const { source } = await system.store.sources.create('segment changes');
  const made = await create(source.id, { metadataId: '54521fdc25e721e32a72ef04', name: 'Two hooks', enabled: false, settings: { hooks: [{ hook: 'https://a.example/h' }, { hook: 'https://b.example/h' }] } });
  expect(made.statusCode).toBe(201);
  expect(made.json().segmentChanges).toEqual([expect.stringContaining('Segment sends each event to all 2 URLs; Switchyard tries them in order until one accepts it')]);
});

it.each([
  [
    'a catalog destination',
    { metadataId: '5d2d2e7f3a7f0d0001f4d2b0', metadata: { name: 'Braze (Actions)' }, name: 'Braze', enabled: true, settings: {} },
    422,
    'metadataId: Braze (Actions) is a Segment catalog destination (5d2d2e7f3a7f0d0001f4d2b0); Switchyard delivers to webhooks and functions',
  ],
  [
    'a masked secret',
    { metadataId: '54521fdc25e721e32a72ef04', enabled: true, settings: { hooks: [{ hook: 'https://a.example/h' }], sharedSecret: '••••••••••abcd' } },
    400,
    'settings.sharedSecret: is masked as Segment exports secrets',
  ],
  ['an Actions destination without its subscriptions', { metadataId: '614a3c7d791c91c41bae7599', enabled: true, settings: {} }, 400, 'mappings: is required for an actions destination'],
  [
    'another Switchyard source named in the body',
    { sourceId: 'src_someoneelse', metadataId: '54521fdc25e721e32a72ef04', enabled: true, settings: { hooks: [{ hook: 'https://a.example/h' }] } },
    400,
    'sourceId: names source src_someoneelse',
  ],
])('refuses %s, naming it', async (_, body, status, message) => {
  const { source } = await system.store.sources.create('segment refused');
  const reply = await create(source.id, body);
  expect(reply.statusCode).toBe(status);
  expect(reply.json().message).toContain(message);
  expect(await system.store.destinations.listBySource(source.id)).toEqual([]);
});

it.each([
  ['__segment_internal_directive', { '@transform': { apply: 'linkedEvents', mapping: {} } }, "is Segment's Linked Events enrichment"],
  ['__segment_entities', { accounts: { '@path': '$.entities.accounts' } }, "is Segment's Linked Audiences entities"],
])('refuses a subscription holding %s, saying what it is and what would be lost', async (key, value, what) => {
  const { source } = await system.store.sources.create('segment internal');
  const reply = await create(source.id, {
    metadataId: '614a3c7d791c91c41bae7599',
    enabled: true,
    settings: {},
    mappings: [{ name: 'Linked', enabled: true, trigger: 'all', settings: { url: 'https://a.example/h', method: 'POST', [key]: value } }],
  });
  expect(reply.statusCode).toBe(400);
  expect(reply.json().message).toContain(`mappings[0].settings.${key}: ${what}`);
  expect(reply.json().message).toContain('would be missing from every request');
});
