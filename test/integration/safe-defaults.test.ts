import { OPERATIONAL_EVENT_TYPES } from '../../src/delivery/operational-events';
import { ADMIN_TOKEN, deliveryResult, send, sourceWithDestination, useSystem, type TestSystem } from '../helpers/system';

/**
 * Safe defaults and errors that teach, on the real API (real Temporal, store and worker): a URL the
 * egress rule refuses is refused when an operational endpoint is saved, an empty body sent as JSON is
 * an empty body, an unknown Liquid filter is named when a mapping is saved, and a field of a fixed set
 * of values lists them.
 */
let system: TestSystem;
let receiverUrl: string;
const created: string[] = [];
// Registered before useSystem's, so it runs while the system is still open (Jest runs afterAll hooks in order).
afterAll(async () => {
  for (const id of created) await system?.store.operationalEndpoints.delete(id);
});
useSystem((s, receiver) => {
  system = s;
  receiverUrl = receiver.url;
});

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const json = { ...admin, 'content-type': 'application/json' };

describe('an operational endpoint URL passes the egress rule when it is saved', () => {
  it.each([
    ['http://169.254.169.254/x', /^url: 169\.254\.169\.254 is a link-local address \(the range of the 169\.254\.169\.254 cloud metadata service\); Switchyard never sends there/],
    ['http://10.0.0.7/hook', /^url: 10\.0\.0\.7 is a private \(RFC 1918\) address/],
    ['http://[fd00::1]/hook', /^url: fd00::1 is a unique-local IPv6 address/],
  ])('refuses %s on create and on PATCH, naming the field', async (url, message) => {
    const refused = await system.app.inject({ method: 'POST', url: '/admin/operational-endpoints', headers: admin, payload: { url, eventTypes: [] } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual({ code: 'invalid_request', message: expect.stringMatching(message) });

    const allowed = await system.app.inject({ method: 'POST', url: '/admin/operational-endpoints', headers: admin, payload: { url: 'https://ops.example.com/switchyard', eventTypes: [] } });
    expect(allowed.statusCode).toBe(201);
    created.push(allowed.json().id);
    const patched = await system.app.inject({ method: 'PATCH', url: `/admin/operational-endpoints/${allowed.json().id}`, headers: admin, payload: { url } });
    expect(patched.statusCode).toBe(400);
    expect(patched.json().message).toMatch(message);
    const kept = await system.app.inject({ method: 'GET', url: `/admin/operational-endpoints/${allowed.json().id}`, headers: admin });
    expect(kept.json().url).toBe('https://ops.example.com/switchyard');
  });

  it('admits what EGRESS_ALLOWLIST admits (this run allows loopback, where its receivers are)', async () => {
    const allowed = await system.app.inject({ method: 'POST', url: '/admin/operational-endpoints', headers: admin, payload: { url: receiverUrl, eventTypes: [] } });
    expect(allowed.statusCode).toBe(201);
    created.push(allowed.json().id);
  });
});

describe('an empty body with a JSON content type is an empty body', () => {
  it('lets a DELETE sent with Content-Type: application/json through', async () => {
    const endpoint = await system.app.inject({ method: 'POST', url: '/admin/operational-endpoints', headers: admin, payload: { url: 'https://ops.example.com/delete-me', eventTypes: [] } });
    const deleted = await system.app.inject({ method: 'DELETE', url: `/admin/operational-endpoints/${endpoint.json().id}`, headers: json });
    expect(deleted.statusCode).toBe(204);
    expect((await system.app.inject({ method: 'GET', url: `/admin/operational-endpoints/${endpoint.json().id}`, headers: admin })).statusCode).toBe(404);
  });

  it('lets a body-less POST through, and a route that needs a body still names it', async () => {
    const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: receiverUrl, headers: {} }] });
    await send(system.app, writeKey, 'track', { userId: 'u-empty', event: 'Empty Body', messageId: 'empty-body-1' });
    expect(await deliveryResult(system.client, source.id, 'empty-body-1')).toMatchObject({ ok: true });
    const redelivered = await system.app.inject({ method: 'POST', url: `/admin/sources/${source.id}/deliveries/empty-body-1/redeliver`, headers: json });
    expect(redelivered.statusCode).toBe(202);

    const needsBody = await system.app.inject({ method: 'POST', url: '/admin/operational-endpoints', headers: json });
    expect(needsBody.statusCode).toBe(400);
    expect(needsBody.json()).toEqual({ code: 'invalid_request', message: 'body: must be object' });
    const ingest = await system.app.inject({ method: 'POST', url: '/v1/track', headers: { ...json, authorization: `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}` } });
    expect(ingest.statusCode).toBe(400);
    expect(ingest.json().message).toMatch(/^body: /);
    // Whitespace is empty too; anything else is still parsed strictly.
    const broken = await system.app.inject({ method: 'POST', url: '/admin/operational-endpoints', headers: json, payload: '{"url":' });
    expect(broken.statusCode).toBe(400);
    expect(broken.json().code).toBe('invalid_json');
  });
});

describe('an unknown Liquid filter is a 400 at save, naming it', () => {
  const destination = (template: string) => ({
    type: 'actions',
    enabled: true,
    mappings: [{ name: 'Totals', enabled: true, trigger: 'type = "track"', settings: { url: receiverUrl, method: 'POST', data: { order: { total: { '@liquid': template } } } } }],
  });

  it('refuses {{ … | dolars }} and saves {{ … | plus: 1 }}', async () => {
    const { source } = await sourceWithDestination(system.store, { webhooks: [{ url: receiverUrl, headers: {} }] });
    const refused = await system.app.inject({ method: 'POST', url: `/admin/sources/${source.id}/destinations`, headers: admin, payload: destination('{{ properties.total | dolars }}') });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().message).toBe('mappings[0].settings.data: mapping "Totals": /order/total: @liquid uses the unknown filter "dolars" (the kit would skip it and send the value unfiltered)');

    const saved = await system.app.inject({ method: 'POST', url: `/admin/sources/${source.id}/destinations`, headers: admin, payload: destination('{{ properties.total | plus: 1 }}') });
    expect(saved.statusCode).toBe(201);
    const patched = await system.app.inject({
      method: 'PATCH',
      url: `/admin/destinations/${saved.json().id}`,
      headers: admin,
      payload: { mappings: destination('{{ userId | upcase | shout }}').mappings },
    });
    expect(patched.statusCode).toBe(400);
    expect(patched.json().message).toMatch(/unknown filter "shout"/);
  });
});

describe('a field of a fixed set of values lists them', () => {
  it('eventTypes[0]: must be one of …', async () => {
    const res = await system.app.inject({ method: 'POST', url: '/admin/operational-endpoints', headers: admin, payload: { url: 'https://ops.example.com/x', eventTypes: ['message.lost'] } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ code: 'invalid_request', message: `eventTypes[0]: must be one of ${OPERATIONAL_EVENT_TYPES.join(', ')}` });
    const format = await system.app.inject({ method: 'POST', url: '/admin/operational-endpoints', headers: admin, payload: { url: 'https://ops.example.com/x', eventTypes: [], format: 'teams' } });
    expect(format.json()).toEqual({ code: 'invalid_request', message: 'format: must be one of standard, slack' });
  });
});
