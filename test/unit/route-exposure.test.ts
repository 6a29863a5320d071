import { SCOPES, type Scope } from '../../src/access/scopes';
import { ROUTE_ACCESS } from '../../src/api/access/route-access';
import { exposureTo, ROUTE_EXPOSURE } from '../../src/api/access/route-exposure';

/** Every set of scopes a token can hold: 2^6 of them. */
const everyScopeSet: Scope[][] = Array.from({ length: 2 ** SCOPES.length }, (_, bits) => SCOPES.filter((_, i) => bits & (2 ** i)));

describe('the exposure model', () => {
  it('states what every route of the access table can reveal, and no route the access table lacks', () => {
    expect(Object.keys(ROUTE_ACCESS).filter((key) => !(key in ROUTE_EXPOSURE))).toEqual([]);
    expect(Object.keys(ROUTE_EXPOSURE).filter((key) => !(key in ROUTE_ACCESS))).toEqual([]);
  });

  it('reveals payload to no token without payloads:read, on any route, whatever other scopes it holds', () => {
    const leaks = Object.keys(ROUTE_ACCESS).flatMap((key) => everyScopeSet.filter((scopes) => exposureTo(key, scopes) === 'payload' && !scopes.includes('payloads:read')).map((scopes) => `${key} to ${JSON.stringify(scopes)}`));
    expect(leaks).toEqual([]);
  });

  it('needs payloads:read besides operate for a replay with a trigger, and shows a delivery body only with payloads:read', () => {
    expect(exposureTo('POST /admin/replays', ['operate'])).toBe('metadata');
    expect(exposureTo('POST /admin/replays', ['operate', 'payloads:read'])).toBe('payload');
    expect(exposureTo('GET /admin/sources/:sourceId/deliveries/:messageId', ['read'])).toBe('metadata');
    expect(exposureTo('GET /admin/sources/:sourceId/deliveries/:messageId', ['read', 'payloads:read'])).toBe('payload');
    expect(exposureTo('POST /codec/*', ['admin', 'operate', 'read'])).toBe('none');
  });
});
