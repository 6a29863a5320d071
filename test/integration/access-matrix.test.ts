import { SCOPES, type Scope } from '../../src/access/scopes';
import { guardedRoutes, type GuardedRoute } from '../../src/api/access/declared-access';
import { ROUTE_ACCESS } from '../../src/api/access/route-access';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { ADMIN_TOKEN, deliveryResult, send, sourceWithDestination, startSystem, type TestSystem } from '../helpers/system';

/**
 * Every admin, codec and portal-settings route against a token of each scope, on the real
 * API (real Temporal, real store). A token holding only the route's scope gets past the access check
 * (its answer is the route's own: 200, 400 for the empty body, 404 for the made-up ids); every other
 * scope gets 403, no token 401. The bodies are empty and the ids made up, so nothing is changed.
 */
let system: TestSystem;
let receiver: Receiver;
const tokens = {} as Record<Scope, string>;

beforeAll(async () => {
  system = await startSystem();
  receiver = await startReceiver();
  for (const scope of SCOPES) {
    const created = await system.app.inject({ method: 'POST', url: '/admin/tokens', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: { name: `matrix ${scope}`, scopes: [scope] } });
    expect(created.statusCode).toBe(201);
    tokens[scope] = created.json<{ token: string }>().token;
  }
});
afterAll(async () => {
  await system.close();
  await receiver.close();
});

const PARAMS: Record<string, string> = {
  id: 'dst_00000000000000000000000000000000',
  sourceId: 'src_00000000000000000000000000000000',
  filterId: 'flt_00000000000000000000000000000000',
  messageId: 'msg-matrix',
  index: '0',
};
const urlOf = (route: GuardedRoute) => route.url.replace(/:(\w+)/g, (_, name: string) => PARAMS[name]).replace(/\*$/, 'decode');

const call = (route: GuardedRoute, token: string | undefined) =>
  system.app.inject({
    method: route.method as 'GET',
    url: urlOf(route),
    headers: { ...(token !== undefined && { authorization: `Bearer ${token}` }) },
    ...(['POST', 'PATCH'].includes(route.method) && { payload: {} }),
  });

it('finds every admin, codec and portal-settings route declaring a scope, and every declared route registered', () => {
  const routes = guardedRoutes(system.app);
  expect(routes.length).toBeGreaterThan(40);
  expect(routes.filter((route) => route.access === undefined).map((route) => `${route.method} ${route.url}`)).toEqual([]);
  const registered = new Set(routes.map((route) => `${route.method} ${route.url}`));
  expect(Object.keys(ROUTE_ACCESS).filter((key) => !registered.has(key))).toEqual([]);
});

it('answers each route to a token of its scope only: 403 to every other scope, 401 without a token', async () => {
  const wrong: string[] = [];
  for (const route of guardedRoutes(system.app)) {
    const required = route.access!.scope;
    const anonymous = await call(route, undefined);
    if (anonymous.statusCode !== 401) wrong.push(`${route.method} ${route.url} without a token: ${anonymous.statusCode}`);
    for (const scope of SCOPES) {
      const reply = await call(route, tokens[scope]);
      const allowed = ![401, 403].includes(reply.statusCode);
      if (allowed !== (scope === required)) wrong.push(`${route.method} ${route.url} with ${scope}: ${reply.statusCode} ${reply.body.slice(0, 120)}`);
      if (!allowed && scope !== required && reply.statusCode === 403) expect(reply.json()).toEqual({ code: 'forbidden', message: `Authorization: this token lacks the scope ${required}` });
    }
    // The bootstrap ADMIN_TOKEN holds every scope.
    const bootstrap = await call(route, ADMIN_TOKEN);
    if ([401, 403].includes(bootstrap.statusCode)) wrong.push(`${route.method} ${route.url} with ADMIN_TOKEN: ${bootstrap.statusCode}`);
  }
  expect(wrong).toEqual([]);
});

it("shows a read token a delivery's metadata without its body, which payloads:read adds", async () => {
  const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
  await send(system.app, writeKey, 'track', { userId: 'u-matrix', event: 'Body Only For Payloads', messageId: 'msg-body', properties: { plan: 'secret-plan' } });
  expect(await deliveryResult(system.client, source.id, 'msg-body')).toMatchObject({ ok: true });
  const url = `/admin/sources/${source.id}/deliveries/msg-body`;
  const asRead = await system.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${tokens.read}` } });
  expect(asRead.statusCode).toBe(200);
  expect(asRead.json()).toMatchObject({ messageId: 'msg-body', status: 'delivered' });
  expect(asRead.json()).not.toHaveProperty('message');
  expect(asRead.body).not.toContain('secret-plan');
  const both = await system.app.inject({ method: 'POST', url: '/admin/tokens', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: { name: 'reader of bodies', scopes: ['read', 'payloads:read'] } });
  const asPayloads = await system.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${both.json<{ token: string }>().token}` } });
  expect(asPayloads.json()).toMatchObject({ message: { event: 'Body Only For Payloads', properties: { plan: 'secret-plan' } } });

  // A redelivery is a change: one audit row, after Temporal took it (SQLite here; the other changes: access-audit.test.ts).
  const redelivered = await system.app.inject({ method: 'POST', url: `${url}/redeliver`, headers: { authorization: `Bearer ${tokens.operate}` } });
  expect(redelivered.statusCode).toBe(202);
  const rows = await system.app.inject({ method: 'GET', url: `/admin/audit?action=delivery.redeliver&target=${source.id}/msg-body`, headers: { authorization: `Bearer ${tokens.admin}` } });
  expect(rows.json<{ entries: unknown[] }>().entries).toEqual([expect.objectContaining({ actor: { tokenId: expect.stringMatching(/^tok_/), name: 'matrix operate' }, outcome: 'success', changed: [] })]);
});
