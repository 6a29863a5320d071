import fc from 'fast-check';
import { decideAccess, SCOPES } from '../../src/access/scopes';
import { ROUTE_ACCESS } from '../../src/api/access/route-access';
import { missingScopeFor } from '../../src/portal/web/scope-check';

/**
 * Least privilege, in the portal: a button is enabled exactly when the server would let
 * its token call the route behind it. The portal's answer must be the server's decideAccess for
 * every route and every set of scopes; a disabled button names the very scope the 403 would.
 */
const SEED = process.env.FC_SEED !== undefined ? Number(process.env.FC_SEED) : process.env.CI ? 4445 : Date.now() % 2 ** 31;
const RUNS = Number(process.env.FC_RUNS ?? 300);

beforeAll(() => {
  console.log(`portal scope-check property test: FC_SEED=${SEED} (FC_RUNS=${RUNS}) replays this run`);
});

it('enables a route for a token exactly when the server allows it, naming the scope the server asks (property)', () => {
  const routes = Object.keys(ROUTE_ACCESS);
  fc.assert(
    fc.property(fc.subarray([...SCOPES]), fc.constantFrom(...routes), (granted, route) => {
      const required = ROUTE_ACCESS[route].scope;
      const missing = missingScopeFor(granted, route);
      expect(missing === undefined).toBe(decideAccess(granted, required).allow);
      if (missing !== undefined) expect(missing).toBe(required);
    }),
    { seed: SEED, numRuns: RUNS },
  );
});

it.each([
  [['read'], 'PATCH /admin/destinations/:id', 'destinations:write'],
  [['read'], 'POST /admin/replays', 'operate'],
  [['read'], 'GET /admin/audit', 'admin'],
  [['read'], 'POST /admin/destinations/:id/mappings/preview', undefined],
  [['read', 'destinations:write'], 'PATCH /admin/destinations/:id', undefined],
  [[...SCOPES], 'GET /admin/no-such-route', 'none'],
])('a token with %j on %s lacks %s', (granted, route, missing) => {
  expect(missingScopeFor(granted, route)).toBe(missing);
});
