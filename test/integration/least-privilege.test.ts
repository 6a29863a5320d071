import { SCOPES, type Scope } from '../../src/access/scopes';
import { guardedRoutes, type GuardedRoute } from '../../src/api/access/declared-access';
import { ROUTE_EXPOSURE } from '../../src/api/access/route-exposure';
import { visibleId } from '../../src/privacy/visible-ids';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { ADMIN_TOKEN, deliveryResult, send, startSystem, type TestSystem } from '../helpers/system';

/**
 * Least privilege and URL-bound secrets on the real API (real Temporal, the run's worker, real store and receivers):
 * no route reveals an event body, a plaintext user id or a yes/no answer about one to a token without
 * payloads:read, whatever its scope; and receiver secrets stay with the URL they were set for.
 */
let system: TestSystem;
const receivers: Receiver[] = [];
const tokens = {} as Record<Scope | 'read+payloads:read' | 'operate+payloads:read', string>;
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  receivers.push(r);
  return r;
}

async function mint(name: string, scopes: Scope[]): Promise<string> {
  const created = await system.app.inject({ method: 'POST', url: '/admin/tokens', headers: admin, payload: { name, scopes } });
  expect(created.statusCode).toBe(201);
  return created.json<{ token: string }>().token;
}

beforeAll(async () => {
  system = await startSystem();
  for (const scope of SCOPES) tokens[scope] = await mint(`least privilege ${scope}`, [scope]);
  tokens['read+payloads:read'] = await mint('least privilege read+payloads', ['read', 'payloads:read']);
  tokens['operate+payloads:read'] = await mint('least privilege operate+payloads', ['operate', 'payloads:read']);
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await system.close();
});

/** A source with one webhooks destination made through the admin API, and its write key. */
async function webhooksDestination(body: Record<string, unknown>) {
  const { source, writeKey } = await system.store.sources.create(`least privilege ${expect.getState().currentTestName ?? ''}`.slice(0, 200));
  const created = await system.app.inject({ method: 'POST', url: `/admin/sources/${source.id}/destinations`, headers: admin, payload: { enabled: true, ...body } });
  expect(created.statusCode).toBe(201);
  return { source, writeKey, destination: created.json<{ id: string }>() };
}

const patch = (id: string, payload: Record<string, unknown>) => system.app.inject({ method: 'PATCH', url: `/admin/destinations/${id}`, headers: admin, payload });

describe('the exposure model against the real answers', () => {
  const USER = 'canary-user-5d1e@example.com';
  const SECRET = 'canary-property-9b7c';

  it('answers every registered route to every scope without a body or a plaintext userId unless the token holds payloads:read', async () => {
    const r = await receiver();
    const { source, writeKey, destination } = await webhooksDestination({ webhooks: [{ url: r.url }] });
    await send(system.app, writeKey, 'track', { userId: USER, event: 'Canary', messageId: 'msg-canary', properties: { secret: SECRET } });
    expect(await deliveryResult(system.client, source.id, 'msg-canary')).toMatchObject({ ok: true });
    const filter = await system.app.inject({ method: 'POST', url: `/admin/destinations/${destination.id}/filters`, headers: admin, payload: { title: 't', enabled: false, if: 'all', actions: [{ type: 'DROP_PROPERTIES', fields: { properties: ['x'] } }] } });
    expect(filter.statusCode).toBe(201);
    const now = Date.now();
    const replay = await system.app.inject({ method: 'POST', url: '/admin/replays', headers: admin, payload: { sourceId: source.id, destinationId: destination.id, since: new Date(now - 600_000).toISOString(), until: new Date(now + 1_000).toISOString(), trigger: `properties.secret = "${SECRET}"`, dryRun: true } });
    expect(replay.statusCode).toBe(202);

    // Reads with the ids of what was just made; changes with made-up ids and empty bodies, so nothing changes.
    const real: Record<string, string> = { sourceId: source.id, messageId: 'msg-canary', filterId: filter.json<{ id: string }>().id, index: '0' };
    const madeUp: Record<string, string> = { id: 'dst_00000000000000000000000000000000', sourceId: 'src_00000000000000000000000000000000', filterId: 'flt_00000000000000000000000000000000', messageId: 'msg-made-up', index: '0' };
    const idFor = (url: string) => (url.startsWith('/admin/sources/:id') ? source.id : url.startsWith('/admin/destinations/:id') ? destination.id : url.startsWith('/admin/replays/:id') ? replay.json<{ id: string }>().id : 'x_00000000000000000000000000000000');
    const urlOf = (route: GuardedRoute) => {
      const changes = route.access?.action !== undefined;
      return route.url.replace(/:(\w+)/g, (_, name: string) => (changes ? madeUp[name] : name === 'id' ? idFor(route.url) : real[name])).replace(/\*$/, 'decode');
    };

    const routes = guardedRoutes(system.app);
    expect(routes.filter((route) => ROUTE_EXPOSURE[`${route.method} ${route.url}`] === undefined).map((route) => `${route.method} ${route.url}`)).toEqual([]);
    const leaks: string[] = [];
    let seenWithPayloads = 0;
    for (const route of routes) {
      for (const [holder, token] of Object.entries(tokens)) {
        const reply = await system.app.inject({ method: route.method as 'GET', url: urlOf(route), headers: bearer(token), ...(['POST', 'PATCH'].includes(route.method) && { payload: {} }) });
        const revealed = reply.body.includes(USER) || reply.body.includes(SECRET);
        if (revealed && !holder.includes('payloads:read')) leaks.push(`${route.method} ${route.url} to ${holder}: ${reply.statusCode} ${reply.body.slice(0, 200)}`);
        if (revealed) seenWithPayloads++;
      }
    }
    expect(leaks).toEqual([]);
    // The walk reads real data: with payloads:read the delivery's detail does show the body.
    expect(seenWithPayloads).toBeGreaterThan(0);

    const detail = (token: string) => system.app.inject({ method: 'GET', url: `/admin/sources/${source.id}/deliveries/msg-canary`, headers: bearer(token) });
    expect((await detail(tokens.read)).json()).toMatchObject({ messageId: 'msg-canary', userId: visibleId(system.keyring, 'userId', USER) });
    expect((await detail(tokens['read+payloads:read'])).json()).toMatchObject({ userId: USER, message: { properties: { secret: SECRET } } });
  });

  it("answers 403 naming the trigger to an operate token's replay with a trigger, dry run or not, and takes it with payloads:read besides", async () => {
    const r = await receiver();
    const { source, destination } = await webhooksDestination({ webhooks: [{ url: r.url }] });
    const range = { sourceId: source.id, destinationId: destination.id, since: new Date(Date.now() - 60_000).toISOString(), until: new Date(Date.now() + 1_000).toISOString() };
    const start = (token: string, body: Record<string, unknown>) => system.app.inject({ method: 'POST', url: '/admin/replays', headers: bearer(token), payload: { ...range, ...body } });

    for (const dryRun of [true, false]) {
      const refused = await start(tokens.operate, { trigger: 'match(properties.email, "a*")', dryRun });
      expect(refused.statusCode).toBe(403);
      expect(refused.json()).toEqual({ code: 'forbidden', message: 'trigger: a replay with a trigger needs the scope payloads:read besides operate (its count answers questions about archived bodies)' });
    }
    const rows = await system.app.inject({ method: 'GET', url: '/admin/audit?action=replay.start', headers: admin });
    expect(rows.json<{ entries: { outcome: string; actor: { name: string } }[] }>().entries).toContainEqual(expect.objectContaining({ outcome: 'denied', actor: expect.objectContaining({ name: 'least privilege operate' }) }));
    expect((await start(tokens.operate, { dryRun: true })).statusCode).toBe(202);
    expect((await start(tokens['operate+payloads:read'], { trigger: 'match(properties.email, "a*")', dryRun: true })).statusCode).toBe(202);
  });
});

describe("an operational endpoint's secret is write-only", () => {
  it("answers a Slack endpoint's URL, its credential, in full only to destinations:write; every other token reads it masked", async () => {
    const slackToken = 'xoxbAbCdEf0123456789GhIj';
    const url = `https://hooks.slack.com/services/T0AB12CD/B0EF34GH/${slackToken}`;
    const created = await system.app.inject({ method: 'POST', url: '/admin/operational-endpoints', headers: admin, payload: { url, eventTypes: [], format: 'slack' } });
    expect(created.statusCode).toBe(201);
    const { id } = created.json<{ id: string }>();
    try {
      // The admin token holds every scope, destinations:write among them; a read token reads it masked.
      expect((await system.app.inject({ method: 'GET', url: `/admin/operational-endpoints/${id}`, headers: admin })).json<{ url: string }>().url).toBe(url);
      const read = await system.app.inject({ method: 'GET', url: `/admin/operational-endpoints/${id}`, headers: bearer(tokens.read) });
      expect(read.statusCode).toBe(200);
      expect(read.json<{ url: string }>().url).toBe('https://hooks.slack.com/services/T0AB12CD/B0EF34GH/…');
      for (const [name, token] of Object.entries(tokens)) {
        for (const path of ['/admin/operational-endpoints', `/admin/operational-endpoints/${id}`]) {
          const reply = await system.app.inject({ method: 'GET', url: path, headers: bearer(token) });
          if (reply.statusCode !== 200) continue;
          if (name === 'destinations:write') expect(reply.body).toContain(url);
          else {
            expect(reply.body).not.toContain(slackToken);
            expect(reply.body).toContain('https://hooks.slack.com/services/T0AB12CD/B0EF34GH/…');
          }
        }
      }
    } finally {
      await system.store.operationalEndpoints.delete(id);
    }
  });

  it('is answered once, in the 201, and no GET route answers it to any scope afterwards; a read token cannot change the endpoint', async () => {
    const created = await system.app.inject({ method: 'POST', url: '/admin/operational-endpoints', headers: admin, payload: { url: 'https://ops.example.com/least-privilege', eventTypes: [] } });
    expect(created.statusCode).toBe(201);
    const { id, secret } = created.json<{ id: string; secret: string }>();
    expect(secret).toMatch(/^whsec_/);
    try {
      const reads = guardedRoutes(system.app).filter((route) => route.method === 'GET' && route.url.startsWith('/admin/operational-endpoints'));
      expect(reads.length).toBe(2);
      for (const route of reads) {
        for (const token of Object.values(tokens)) {
          const reply = await system.app.inject({ method: 'GET', url: route.url.replace(':id', id), headers: bearer(token) });
          expect(reply.body).not.toContain(secret);
        }
      }
      for (const scope of ['read', 'payloads:read', 'operate', 'regulations'] as const) {
        expect((await system.app.inject({ method: 'PATCH', url: `/admin/operational-endpoints/${id}`, headers: bearer(tokens[scope]), payload: { enabled: false } })).statusCode).toBe(403);
      }
      const audit = await system.app.inject({ method: 'GET', url: `/admin/audit?target=${id}`, headers: admin });
      expect(audit.body).toContain('operational_endpoint.create');
      expect(audit.body).not.toContain(secret);
    } finally {
      await system.store.operationalEndpoints.delete(id);
    }
  });
});

describe('secrets bound to their URL', () => {
  it("sends the new receiver of a re-pointed webhook no Authorization: the old URL's auth is dropped unless the same PATCH gives it again", async () => {
    const old = await receiver();
    const attacker = await receiver();
    const { source, writeKey, destination } = await webhooksDestination({ webhooks: [{ url: old.url, headers: { 'X-Api-Key': 'old-header-secret' } }], auth: { type: 'bearer', token: 'old-receiver-token' } });
    await send(system.app, writeKey, 'track', { userId: 'u', event: 'Before', messageId: 'msg-before' });
    expect((await old.waitForMessage('msg-before')).headers).toMatchObject({ authorization: 'Bearer old-receiver-token', 'x-api-key': 'old-header-secret' });

    const repointed = await patch(destination.id, { webhooks: [{ url: attacker.url }] });
    expect(repointed.statusCode).toBe(200);
    expect(repointed.json()).not.toHaveProperty('auth');
    await send(system.app, writeKey, 'track', { userId: 'u', event: 'After', messageId: 'msg-after' });
    expect(await deliveryResult(system.client, source.id, 'msg-after')).toMatchObject({ ok: true });
    const got = await attacker.waitForMessage('msg-after');
    expect(got.headers.authorization).toBeUndefined();
    expect(got.headers['x-api-key']).toBeUndefined();
    expect(JSON.stringify(got.headers)).not.toMatch(/old-receiver-token|old-header-secret/);

    // Given again with the new URL, auth stays; a removed URL keeps it too (it goes only where it went).
    const again = await patch(destination.id, { webhooks: [{ url: attacker.url }, { url: old.url }], auth: { type: 'bearer', token: 'new-receiver-token' } });
    expect(again.json()).toMatchObject({ auth: { type: 'bearer' } });
    expect((await patch(destination.id, { webhooks: [{ url: old.url }] })).json()).toMatchObject({ auth: { type: 'bearer' } });
  });

  it('drops the client certificate when an OAuth2 tokenUrl changes and the same PATCH does not give it again', async () => {
    const r = await receiver();
    const tls = { certificate: '-----BEGIN CERTIFICATE-----\nAA\n-----END CERTIFICATE-----', privateKey: '-----BEGIN PRIVATE KEY-----\nAA\n-----END PRIVATE KEY-----' };
    const { destination } = await webhooksDestination({ enabled: false, webhooks: [{ url: r.url }], auth: { type: 'oauth2', tokenUrl: 'https://idp.example.com/token', clientId: 'c', clientSecret: 's' }, tls });
    const moved = await patch(destination.id, { auth: { type: 'oauth2', tokenUrl: 'https://other-idp.example.com/token', clientId: 'c', clientSecret: 's' } });
    expect(moved.json()).toMatchObject({ tlsSet: false, auth: { tokenUrl: 'https://other-idp.example.com/token' } });
    const http = await patch(destination.id, { auth: { type: 'oauth2', tokenUrl: 'http://idp.example.com/token', clientId: 'c', clientSecret: 's' } });
    expect(http.statusCode).toBe(400);
    expect(http.json<{ message: string }>().message).toBe('auth.tokenUrl: must use https (RFC 6749 §3.2: the client secret travels in the request); http only to a loopback address');
  });

  it("refuses a mapping's masked header for a changed URL or a renamed mapping (400 naming the header), and the re-pointed mapping's receiver gets none of the old secrets", async () => {
    const crm = await receiver();
    const attacker = await receiver();
    const { source, writeKey } = await system.store.sources.create('least privilege mapping');
    const created = await system.app.inject({
      method: 'POST',
      url: `/admin/sources/${source.id}/destinations`,
      headers: admin,
      payload: { type: 'actions', enabled: true, auth: { type: 'bearer', token: 'crm-bearer' }, mappings: [{ name: 'Send', enabled: true, trigger: 'all', settings: { url: crm.url, method: 'POST', headers: { 'X-Api-Key': 'crm-header-secret' } } }] },
    });
    expect(created.statusCode).toBe(201);
    const id = created.json<{ id: string }>().id;
    // GET, edit, PATCH back: the masked header comes back as ********.
    const shown = (await system.app.inject({ method: 'GET', url: `/admin/destinations/${id}`, headers: admin })).json<{ mappings: { name: string; settings: { url: string; headers: Record<string, string> } }[] }>().mappings;
    expect(shown[0].settings.headers).toEqual({ 'X-Api-Key': '********' });

    const repointed = await patch(id, { mappings: [{ ...shown[0], settings: { ...shown[0].settings, url: attacker.url } }] });
    expect(repointed.statusCode).toBe(400);
    expect(repointed.json<{ message: string }>().message).toBe("mappings[0].settings.headers.X-Api-Key: ******** keeps a saved value, and the mapping's URL changed, and a saved value stays with the URL it was set for; send the value itself");
    const renamed = await patch(id, { mappings: [{ ...shown[0], name: 'Send renamed' }] });
    expect(renamed.statusCode).toBe(400);
    expect(renamed.json<{ message: string }>().message).toMatch(/^mappings\[0\]\.settings\.headers\.X-Api-Key: \*{8} keeps a saved value, and no saved mapping is named "Send renamed"/);
    // The same URL keeps the saved value.
    expect((await patch(id, { mappings: shown })).statusCode).toBe(200);

    const moved = await patch(id, { mappings: [{ ...shown[0], settings: { ...shown[0].settings, url: attacker.url, headers: {} } }] });
    expect(moved.statusCode).toBe(200);
    expect(moved.json()).not.toHaveProperty('auth');
    await send(system.app, writeKey, 'track', { userId: 'u', event: 'Mapped', messageId: 'msg-mapped' });
    const [got] = await attacker.waitForRequests(1);
    expect(got.headers.authorization).toBeUndefined();
    expect(JSON.stringify(got.headers)).not.toMatch(/crm-bearer|crm-header-secret/);
  });
});
