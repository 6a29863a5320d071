import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { deliveryWorkflowId } from '../../src/delivery/ids';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { ADMIN_TOKEN, decodedWorkflowHistoryText, deliveryResult, send, type TestSystem, useSystem } from '../helpers/system';
import { startTokenEndpoint, type TokenEndpoint } from '../helpers/token-endpoint';

/**
 * Actions destinations through the real API, a real Temporal, the run's worker process
 * and real receivers: each mapping whose trigger matches is its own request, rendered by Segment's
 * mapping kit, with the seed's delivery rules per request; outbound auth with its secrets nowhere.
 */

let system: TestSystem;
const closing: { close(): Promise<void> }[] = [];
useSystem((s) => (system = s), { overrides: { deliveryRetryWindow: 8_000 } });
afterAll(async () => Promise.all(closing.map((c) => c.close())));

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  closing.push(r);
  return r;
}

async function tokenEndpoint(): Promise<TokenEndpoint> {
  const t = await startTokenEndpoint();
  closing.push(t);
  return t;
}

/** A source and an actions destination made through the admin API; every admin answer is kept for the secrets check. */
const adminAnswers: string[] = [];
async function actionsDestination(body: Record<string, unknown>) {
  const { source, writeKey } = await system.store.sources.create(`actions ${expect.getState().currentTestName ?? ''}`.slice(0, 200));
  const created = await system.app.inject({ method: 'POST', url: `/admin/sources/${source.id}/destinations`, headers: admin, payload: { type: 'actions', enabled: true, ...body } });
  adminAnswers.push(created.body);
  expect(created.statusCode).toBe(201);
  const destination = created.json<{ id: string }>();
  adminAnswers.push((await system.app.inject({ method: 'GET', url: `/admin/destinations/${destination.id}`, headers: admin })).body);
  return { source, writeKey, destination };
}

const mapping = (name: string, trigger: string, url: string, extra: Record<string, unknown> = {}) => ({
  name,
  enabled: true,
  trigger,
  settings: { url, method: 'POST', ...extra },
});

describe('an actions destination', () => {
  it('sends exactly the mapped requests: two mappings with different triggers, each event only through the one it meets', async () => {
    const r = await receiver();
    const { source, writeKey } = await actionsDestination({
      sharedSecret: 'actions-shared-secret',
      mappings: [
        mapping('Order to CRM', 'type = "track" and event = "Order Completed"', `${r.url}/orders`, {
          method: 'PUT',
          headers: { 'X-Team': 'growth' },
          data: { text: { '@template': 'Order {{properties.orderId}} by {{userId}}' }, total: { '@path': '$.properties.total' }, kind: 'order' },
        }),
        mapping('New user', 'type = "identify"', `${r.url}/users`, {
          method: 'PATCH',
          data: { email: { '@path': '$.traits.email' }, plan: { '@if': { exists: { '@path': '$.traits.plan' }, then: { '@path': '$.traits.plan' }, else: 'free' } } },
        }),
      ],
    });
    await send(system.app, writeKey, 'track', { userId: 'u1', event: 'Viewed Page', messageId: 'act-none' });
    await send(system.app, writeKey, 'track', { userId: 'u1', event: 'Order Completed', messageId: 'act-order', properties: { orderId: 'o-7', total: 42.5 } });
    await send(system.app, writeKey, 'identify', { userId: 'u2', messageId: 'act-user', traits: { email: 'u2@example.com' } });
    expect(await deliveryResult(system.client, source.id, 'act-order')).toMatchObject({ ok: true, report: { destinations: [{ status: 'delivered', mappings: [{ name: 'Order to CRM', status: 'delivered' }] }] } });
    expect(await deliveryResult(system.client, source.id, 'act-user')).toMatchObject({ ok: true, report: { destinations: [{ status: 'delivered', mappings: [{ name: 'New user', status: 'delivered' }] }] } });
    // No mapping's trigger met: no workflow at all (the plan's `trigger` stop).
    await expect(system.client.workflow.getHandle(deliveryWorkflowId(source.id, 'act-none')).describe()).rejects.toThrow();

    expect(r.requests.map((q) => [q.method, q.path])).toEqual(expect.arrayContaining([['PUT', '/hook/orders'], ['PATCH', '/hook/users']]));
    expect(r.requests).toHaveLength(2);
    const order = r.requests.find((q) => q.path === '/hook/orders')!;
    expect(JSON.parse(order.body)).toEqual({ text: 'Order o-7 by u1', total: 42.5, kind: 'order' });
    expect(order.headers['x-team']).toBe('growth');
    expect(order.headers['content-type']).toBe('application/json');
    // Signed over the body as sent (the mapped one).
    expect(order.headers['x-signature']).toBe(createHmac('sha1', 'actions-shared-secret').update(order.body, 'utf8').digest('hex'));
    const user = r.requests.find((q) => q.path === '/hook/users')!;
    expect(JSON.parse(user.body)).toEqual({ email: 'u2@example.com', plan: 'free' });
    expect(user.headers['x-team']).toBeUndefined();
  }, 60_000);

  it("delivers Segment's exported subscriptions pasted unchanged (Public API JSON and Terraform's settings string) as Segment would", async () => {
    const r = await receiver();
    const exports = JSON.parse(readFileSync(path.join(__dirname, '..', 'fixtures', 'segment-exports', 'webhooks-subscriptions.json'), 'utf8')) as {
      publicApi: { settings: Record<string, unknown> }[];
      terraform: { settings: string }[];
      event: Record<string, unknown>;
      rendered: Record<string, unknown>;
    };
    // The exports as they are, each URL pointed at the receiver (the one edit a team makes).
    const publicApi = { ...exports.publicApi[0], settings: { ...exports.publicApi[0].settings, url: `${r.url}/fulfilment` } };
    const terraform = { ...exports.terraform[0], settings: exports.terraform[0].settings.replace('https://hooks.example.com/app', `${r.url}/app`) };
    const { source, writeKey } = await actionsDestination({ mappings: [publicApi, terraform] });
    const { type: _type, ...event } = exports.event;
    await send(system.app, writeKey, 'track', { ...event, messageId: 'pasted-1' });
    expect(await deliveryResult(system.client, source.id, 'pasted-1')).toMatchObject({ ok: true, report: { destinations: [{ status: 'delivered' }] } });
    expect(JSON.parse(r.requests.find((q) => q.path === '/hook/fulfilment')!.body)).toEqual(exports.rendered['Order Completed to fulfilment']);
    expect(r.requests.find((q) => q.path === '/hook/fulfilment')!.headers['x-team']).toBe('fulfilment');
    expect(JSON.parse(r.requests.find((q) => q.path === '/hook/app')!.body)).toEqual(exports.rendered['Webhook send subscription']);
    expect(r.requests).toHaveLength(2);
  }, 60_000);

  it('renders @arrayPath as Segment\'s mapping kit does, and a render error fails only that request, with its reason', async () => {
    const r = await receiver();
    const { source, writeKey } = await actionsDestination({
      mappings: [
        mapping('Products', 'event = "Cart Viewed"', `${r.url}/products`, { data: { items: { '@arrayPath': ['$.properties.products', { sku: { '@path': '$.productId' }, price: { '@path': '$.price' } }] } } }),
        mapping('Whole event', 'event = "Cart Viewed"', `${r.url}/events`),
        // Valid when saved; fails on an event whose query is not valid percent-encoding.
        mapping('Search', 'event = "Cart Viewed" and properties.query != null', `${r.url}/search`, { data: { q: { '@liquid': '{{ properties.query | url_decode }}' } } }),
      ],
    });
    await send(system.app, writeKey, 'track', { userId: 'u3', event: 'Cart Viewed', messageId: 'act-array', properties: { products: [{ productId: '123', price: 0.5 }, { productId: '456', price: 0.99 }] } });
    expect(await deliveryResult(system.client, source.id, 'act-array')).toMatchObject({ ok: true });
    expect(JSON.parse(r.requests.find((q) => q.path === '/hook/products')!.body)).toEqual({ items: [{ sku: '123', price: 0.5 }, { sku: '456', price: 0.99 }] });
    // The default data is the whole event.
    expect(JSON.parse(r.requests.find((q) => q.path === '/hook/events')!.body)).toMatchObject({ type: 'track', event: 'Cart Viewed', messageId: 'act-array', userId: 'u3' });

    r.requests.splice(0);
    await send(system.app, writeKey, 'track', { userId: 'u3', event: 'Cart Viewed', messageId: 'act-render-error', properties: { products: [], query: '%E0%A4%A' } });
    const result = await deliveryResult(system.client, source.id, 'act-render-error');
    expect(result).toMatchObject({ ok: false, report: { destinations: [{ status: 'failed', mappings: [{ name: 'Products', status: 'delivered' }, { name: 'Whole event', status: 'delivered' }, { name: 'Search', status: 'failed', rounds: 1 }] }] } });
    expect(result.ok === false && result.message).toContain('mapping "Search" could not render this message: URI malformed');
    expect(r.requests.map((q) => q.path).sort()).toEqual(['/hook/events', '/hook/products']);
  }, 60_000);

  it('keeps the seed\'s rules per request: a 5xx mapping is retried to success while a 4xx one fails at once', async () => {
    const r = await receiver();
    let failedOnce = false;
    r.respond((q) => {
      if (q.path === '/hook/flaky' && !failedOnce) {
        failedOnce = true;
        return { status: 503 };
      }
      return q.path === '/hook/refused' ? { status: 400 } : { status: 200 };
    });
    const { source, writeKey } = await actionsDestination({ mappings: [mapping('Flaky', 'all', `${r.url}/flaky`), mapping('Refused', 'all', `${r.url}/refused`)] });
    await send(system.app, writeKey, 'track', { userId: 'u4', event: 'E', messageId: 'act-rules' });
    const result = await deliveryResult(system.client, source.id, 'act-rules');
    expect(result).toMatchObject({ ok: false, report: { destinations: [{ status: 'failed', mappings: [{ name: 'Flaky', status: 'delivered', rounds: 2 }, { name: 'Refused', status: 'failed', rounds: 1 }] }] } });
    expect(r.requests.filter((q) => q.path === '/hook/flaky')).toHaveLength(2);
    expect(r.requests.filter((q) => q.path === '/hook/refused')).toHaveLength(1);
    // Each mapping's attempts, named, in the delivery's detail (read from the workflow's history).
    const detail = await system.app.inject({ method: 'GET', url: `/admin/sources/${source.id}/deliveries/act-rules`, headers: admin });
    expect(detail.statusCode).toBe(200);
    const attempts = detail.json<{ destinations: { attempts: { mapping?: string; round: number; outcome: string }[] }[] }>().destinations[0].attempts;
    expect(attempts.map(({ mapping, round, outcome }) => ({ mapping, round, outcome })).sort((a, b) => `${a.mapping}${a.round}`.localeCompare(`${b.mapping}${b.round}`))).toEqual([
      { mapping: 'Flaky', round: 1, outcome: 'retry' },
      { mapping: 'Flaky', round: 2, outcome: 'success' },
      { mapping: 'Refused', round: 1, outcome: 'permanent' },
    ]);
    // Their summaries in the Web UI name the mapping (the retry is a regular activity).
    const history = await decodedWorkflowHistoryText(system, deliveryWorkflowId(source.id, 'act-rules'));
    expect(history).toMatch(/mapping \\?"Flaky\\?" of dst_[0-9a-f]+ · round 2/);
  }, 60_000);

  it("holds every mapping's request while the destination is paused, and sends each once on resume", async () => {
    const r = await receiver();
    const { source, writeKey, destination } = await actionsDestination({ paused: true, mappings: [mapping('One', 'all', `${r.url}/one`), mapping('Two', 'all', `${r.url}/two`)] });
    await send(system.app, writeKey, 'track', { userId: 'u8', event: 'E', messageId: 'act-held' });
    await new Promise((wait) => setTimeout(wait, 1_500));
    expect(r.requests).toHaveLength(0);
    await system.app.inject({ method: 'PATCH', url: `/admin/destinations/${destination.id}`, headers: admin, payload: { paused: false } });
    expect(await deliveryResult(system.client, source.id, 'act-held')).toMatchObject({ ok: true, report: { destinations: [{ status: 'delivered', mappings: [{ name: 'One', rounds: 1 }, { name: 'Two', rounds: 1 }] }] } });
    expect(r.requests.map((q) => q.path).sort()).toEqual(['/hook/one', '/hook/two']);
  }, 60_000);

  it('renders from the body the destination filters left, and consent stops it before any trigger', async () => {
    const r = await receiver();
    const { source, writeKey, destination } = await actionsDestination({ consent: { categories: ['analytics'] }, mappings: [mapping('All of it', 'all', r.url)] });
    const filter = await system.app.inject({
      method: 'POST',
      url: `/admin/destinations/${destination.id}/filters`,
      headers: admin,
      payload: { title: 'No emails', enabled: true, if: 'all', actions: [{ type: 'DROP_PROPERTIES', fields: { properties: ['email'] } }] },
    });
    expect(filter.statusCode).toBe(201);
    const granted = { consent: { categoryPreferences: { analytics: true } } };
    await send(system.app, writeKey, 'track', { userId: 'u9', event: 'E', messageId: 'act-refused', context: { consent: { categoryPreferences: { analytics: false } } } });
    await send(system.app, writeKey, 'track', { userId: 'u9', event: 'E', messageId: 'act-filtered', context: granted, properties: { email: 'u9@example.com', plan: 'pro' } });
    expect(await deliveryResult(system.client, source.id, 'act-filtered')).toMatchObject({ ok: true });
    await expect(system.client.workflow.getHandle(deliveryWorkflowId(source.id, 'act-refused')).describe()).rejects.toThrow();
    expect(r.requests).toHaveLength(1);
    expect(JSON.parse(r.requests[0].body)).toMatchObject({ messageId: 'act-filtered', properties: { plan: 'pro' } });
    expect(JSON.parse(r.requests[0].body).properties).not.toHaveProperty('email');
  }, 60_000);

  it('refuses a mapping the kit cannot render, naming the mapping, the field and the directive', async () => {
    const { source } = await system.store.sources.create('actions validation');
    const refused = await system.app.inject({
      method: 'POST',
      url: `/admin/sources/${source.id}/destinations`,
      headers: admin,
      payload: { type: 'actions', enabled: true, mappings: [mapping('Bad one', 'all', 'https://example.com/x', { data: { who: { '@nonsense': 1 } } })] },
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().message).toBe('mappings[0].settings.data: mapping "Bad one": /who has an invalid directive: @nonsense.');
  });
});

describe('POST /admin/destinations/:id/mappings/preview', () => {
  it('shows each mapping\'s match and request for an event, secrets masked, or its render error; sends nothing', async () => {
    const r = await receiver();
    const { destination } = await actionsDestination({
      sharedSecret: 'preview-shared-secret',
      auth: { type: 'bearer', token: 'preview-bearer-token' },
      mappings: [
        mapping('Slack', 'event = "Order Completed"', `${r.url}/slack`, { headers: { 'X-Key': 'preview-header-secret' }, data: { text: { '@template': 'Order {{properties.orderId}}' } } }),
        mapping('Search', 'all', `${r.url}/search`, { method: 'PATCH', data: { q: { '@liquid': '{{ properties.query | url_decode }}' } } }),
      ],
    });
    const preview = await system.app.inject({
      method: 'POST',
      url: `/admin/destinations/${destination.id}/mappings/preview`,
      headers: admin,
      payload: { event: { type: 'track', event: 'Viewed', userId: 'u', properties: { orderId: 'o-1', query: '%E0%A4%A' } } },
    });
    expect(preview.statusCode).toBe(200);
    expect(preview.json()).toEqual({
      mappings: [
        {
          name: 'Slack',
          enabled: true,
          matched: false,
          request: {
            method: 'POST',
            url: `${r.url}/slack`,
            headers: { 'x-key': '********', 'content-type': 'application/json', 'user-agent': 'Switchyard/1.0', 'x-signature': '********', authorization: '********' },
            body: { text: 'Order o-1' },
          },
        },
        { name: 'Search', enabled: true, matched: true, error: expect.stringMatching(/^mapping "Search" could not render this message: URI malformed/) },
      ],
    });
    for (const secret of ['preview-shared-secret', 'preview-bearer-token', 'preview-header-secret']) expect(preview.body).not.toContain(secret);
    expect(r.requests).toHaveLength(0);
  });
});

describe('outbound authentication', () => {
  it('fetches one OAuth2 token for many messages, and on a 401 refreshes once and retries that request', async () => {
    const tokens = await tokenEndpoint();
    const r = await receiver();
    r.respond((q) => ({ status: q.headers.authorization === `Bearer ${tokens.current()}` ? 200 : 401 }));
    const { source, writeKey, destination } = await actionsDestination({
      mappings: [mapping('API', 'all', `${r.url}/api`)],
      auth: { type: 'oauth2', tokenUrl: tokens.url, clientId: 'client-a', clientSecret: 'oauth-client-secret-xyz', scope: 'events:write' },
    });
    const ids = ['oa-1', 'oa-2', 'oa-3', 'oa-4'];
    for (const id of ids) await send(system.app, writeKey, 'track', { userId: 'u5', event: 'E', messageId: id });
    for (const id of ids) expect(await deliveryResult(system.client, source.id, id)).toMatchObject({ ok: true });
    expect(tokens.requests).toHaveLength(1);
    expect(Object.fromEntries(tokens.requests[0])).toEqual({ grant_type: 'client_credentials', client_id: 'client-a', client_secret: 'oauth-client-secret-xyz', scope: 'events:write' });
    expect(r.requests.every((q) => q.headers.authorization === 'Bearer token-1')).toBe(true);

    // The receiver stops taking token-1: the next request gets a 401, one new token, one retry.
    r.respond((q) => ({ status: q.headers.authorization === 'Bearer token-2' ? 200 : 401 }));
    r.requests.splice(0);
    await send(system.app, writeKey, 'track', { userId: 'u5', event: 'E', messageId: 'oa-refresh' });
    expect(await deliveryResult(system.client, source.id, 'oa-refresh')).toMatchObject({ ok: true, report: { destinations: [{ status: 'delivered', rounds: 1 }] } });
    expect(tokens.requests).toHaveLength(2);
    expect(r.requests.map((q) => q.headers.authorization)).toEqual(['Bearer token-1', 'Bearer token-2']);

    // Secrets nowhere: admin answers, the delivery's history.
    adminAnswers.push((await system.app.inject({ method: 'GET', url: `/admin/destinations/${destination.id}`, headers: admin })).body);
    for (const answer of adminAnswers) expect(answer).not.toContain('oauth-client-secret-xyz');
    const history = await decodedWorkflowHistoryText(system, deliveryWorkflowId(source.id, 'oa-refresh'));
    expect(history).toContain('oa-refresh');
    expect(history).not.toContain('oauth-client-secret-xyz');
    expect(history).not.toContain('token-2');
  }, 90_000);

  it('fails a delivery whose token endpoint is dead with that reason, after retrying it', async () => {
    const dead = await tokenEndpoint();
    await dead.close();
    const r = await receiver();
    const { source, writeKey } = await actionsDestination({ mappings: [mapping('API', 'all', r.url)], auth: { type: 'oauth2', tokenUrl: dead.url, clientId: 'c', clientSecret: 'dead-endpoint-secret' } });
    await send(system.app, writeKey, 'track', { userId: 'u6', event: 'E', messageId: 'oa-dead' });
    const result = await deliveryResult(system.client, source.id, 'oa-dead');
    expect(result).toMatchObject({ ok: false, report: { destinations: [{ status: 'failed' }] } });
    expect(result.ok === false && result.message).toMatch(/retry window exhausted: mapping "API": oauth2 token endpoint: ECONNREFUSED/);
    expect(result.ok === false && result.report!.destinations[0].rounds).toBeGreaterThan(1);
    expect(r.requests).toHaveLength(0);
  }, 60_000);

  it('sends bearer and basic credentials on either destination type, and echoes neither', async () => {
    const r = await receiver();
    const { source, writeKey, destination } = await actionsDestination({ mappings: [mapping('API', 'all', r.url)], auth: { type: 'bearer', token: 'bearer-token-secret-1' } });
    await send(system.app, writeKey, 'track', { userId: 'u7', event: 'E', messageId: 'bearer-1' });
    expect(await deliveryResult(system.client, source.id, 'bearer-1')).toMatchObject({ ok: true });
    expect(r.requests[0].headers.authorization).toBe('Bearer bearer-token-secret-1');

    const { source: seedSource, writeKey: seedKey } = await system.store.sources.create('basic on webhooks');
    const created = await system.app.inject({
      method: 'POST',
      url: `/admin/sources/${seedSource.id}/destinations`,
      headers: admin,
      payload: { enabled: true, webhooks: [{ url: r.url }], auth: { type: 'basic', username: 'switchyard', password: 'basic-password-secret' } },
    });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({ type: 'webhooks', auth: { type: 'basic', username: 'switchyard' } });
    adminAnswers.push(created.body, (await system.app.inject({ method: 'GET', url: `/admin/sources/${source.id}/destinations`, headers: admin })).body);
    await send(system.app, seedKey, 'track', { userId: 'u7', event: 'E', messageId: 'basic-1' });
    expect(await deliveryResult(system.client, seedSource.id, 'basic-1')).toMatchObject({ ok: true });
    expect(r.requests[1].headers.authorization).toBe(`Basic ${Buffer.from('switchyard:basic-password-secret').toString('base64')}`);
    expect(JSON.parse(r.requests[1].body)).toMatchObject({ messageId: 'basic-1' });

    adminAnswers.push((await system.app.inject({ method: 'GET', url: `/admin/destinations/${destination.id}`, headers: admin })).body);
    for (const answer of adminAnswers) for (const secret of ['bearer-token-secret-1', 'basic-password-secret']) expect(answer).not.toContain(secret);
    for (const id of ['bearer-1', 'basic-1']) {
      const history = await decodedWorkflowHistoryText(system, deliveryWorkflowId(id === 'bearer-1' ? source.id : seedSource.id, id));
      expect(history).not.toContain('bearer-token-secret-1');
      expect(history).not.toContain('basic-password-secret');
    }
  }, 60_000);

  it('writes no auth secret to the worker\'s log', () => {
    const log = readFileSync(path.join(process.env.SWITCHYARD_TEST_DIR!, 'worker.log'), 'utf8');
    expect(log).toContain('mapping'); // the worker did log about mappings (the render failure)
    for (const secret of ['oauth-client-secret-xyz', 'token-1', 'token-2', 'bearer-token-secret-1', 'basic-password-secret', 'dead-endpoint-secret', 'actions-shared-secret']) expect(log).not.toContain(secret);
  });
});
