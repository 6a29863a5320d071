import type { Scope } from '../../access/scopes';
// The server's own table (pure data): the portal asks it which scope a route needs, so a button
// and its route can never disagree about who may press it.
import { ROUTE_ACCESS } from '../../api/access/route-access';

/**
 * A route as route-access.ts keys it: `METHOD /admin/...` with its URL pattern. The table is a
 * plain record, so a typo type-checks: test/unit/portal-route-keys.test.ts reads every route the
 * portal names and fails on one the table lacks (which would disable its button for every token).
 */
export type RouteKey = string;

/** The scope a route needs; a route missing from the table needs one no token has. */
export const scopeOf = (route: RouteKey): Scope | undefined => ROUTE_ACCESS[route]?.scope;

/**
 * The scope a token holding `granted` lacks for a route ('none': the route declares none, so no
 * token may), or undefined when it may call it. Pure, and the same answer as the server's
 * decideAccess (test/unit/portal-scope-check.test.ts checks it for every route and scope set).
 */
export function missingScopeFor(granted: readonly string[], route: RouteKey): Scope | 'none' | undefined {
  const scope = scopeOf(route);
  if (scope === undefined) return 'none';
  return granted.includes(scope) ? undefined : scope;
}
