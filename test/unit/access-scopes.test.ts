import { decideAccess, lastUsedIsStale, LAST_USED_RESOLUTION_MS, scopesBeyond, SCOPES, tokenState, type Scope } from '../../src/access/scopes';
import { ROUTE_ACCESS, routeAccess } from '../../src/api/access/route-access';

describe('decideAccess: deny by default, no scope implies another', () => {
  it.each<[readonly Scope[], Scope | undefined, boolean]>([
    [['read'], 'read', true],
    [['read'], 'payloads:read', false],
    [['payloads:read'], 'read', false],
    [['admin'], 'read', false],
    [['admin'], 'payloads:read', false],
    [['admin'], 'admin', true],
    [['destinations:write'], 'operate', false],
    [['operate', 'regulations'], 'regulations', true],
    [[], 'read', false],
    [SCOPES, undefined, false],
    [SCOPES, 'admin', true],
  ])('%j on a route declaring %s → %s', (granted, required, allowed) => {
    const decision = decideAccess(granted, required);
    expect(decision.allow).toBe(allowed);
    if (!decision.allow) expect(decision.message).toMatch(required === undefined ? /^route: declares no scope/ : new RegExp(`lacks the scope ${required}$`));
  });
});

describe('scopesBeyond: a token mints no scope it lacks', () => {
  it.each<[Scope[], Scope[], Scope[]]>([
    [['admin'], ['admin'], []],
    [['admin'], ['admin', 'read'], ['read']],
    [['admin', 'read'], ['read'], []],
    [['admin'], ['payloads:read', 'regulations'], ['payloads:read', 'regulations']],
    [[...SCOPES], [...SCOPES], []],
  ])('%j minting %j lacks %j', (granted, requested, lacking) => expect(scopesBeyond(granted, requested)).toEqual(lacking));
});

describe('tokenState: expired from expiresAt on', () => {
  const at = Date.parse('2026-11-28T01:00:00.000Z');
  it.each<[string | null, number, string]>([
    [null, at, 'active'],
    ['2026-11-28T01:00:00.001Z', at, 'active'],
    ['2026-11-28T01:00:00.000Z', at, 'expired'],
    ['2026-11-28T00:59:59.999Z', at, 'expired'],
  ])('expiresAt %s at %s → %s', (expiresAt, now, state) => expect(tokenState(expiresAt, now)).toBe(state));
});

describe('lastUsedIsStale: lastUsedAt is written at most once a minute per token', () => {
  it.each<[number | undefined, number, boolean]>([
    [undefined, 0, true],
    [1_000, 1_000, false],
    [1_000, 1_000 + LAST_USED_RESOLUTION_MS - 1, false],
    [1_000, 1_000 + LAST_USED_RESOLUTION_MS, true],
  ])('last written %s, now %s → %s', (last, now, stale) => expect(lastUsedIsStale(last, now)).toBe(stale));
});

describe('the route table', () => {
  it('asks of HEAD what it asks of GET', () => expect(routeAccess('HEAD', '/admin/sources')).toBe(routeAccess('GET', '/admin/sources')));

  it('declares an audit action on every route that changes something, and none on reads', () => {
    const changes = Object.entries(ROUTE_ACCESS).filter(([key]) => !key.startsWith('GET ') && key !== 'POST /codec/*' && !key.endsWith('/preview'));
    expect(changes.filter(([, access]) => !access.action)).toEqual([]);
    expect(Object.entries(ROUTE_ACCESS).filter(([key, access]) => key.startsWith('GET ') && access.action)).toEqual([]);
  });

  it('gives event bodies only to payloads:read, and tokens and the audit log only to admin', () => {
    expect(routeAccess('POST', '/codec/*')?.scope).toBe('payloads:read');
    for (const key of ['POST /admin/tokens', 'GET /admin/tokens', 'DELETE /admin/tokens/:id', 'GET /admin/audit']) expect(ROUTE_ACCESS[key].scope).toBe('admin');
  });
});
