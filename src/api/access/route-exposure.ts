import type { Scope } from '../../access/scopes';
import { ROUTE_ACCESS } from './route-access';

/**
 * What user data each admin, codec and portal-settings route can reveal, beside
 * the scope it needs (route-access.ts), so that "no token without payloads:read learns anything of
 * an event body" is a property of one table, checked over every route × every set of scopes
 * (test/unit/route-exposure.test.ts), and held against the real answers
 * (test/integration/exposure-matrix.test.ts).
 *
 * - `none`: configuration and counts that name no user (sources, destinations, filters, tokens).
 * - `metadata`: what happened to a message or a user (ids, types, statuses, attempts, keyed hashes),
 *   never what a body carried.
 * - `payload`: an event body, a plaintext user id, or a yes/no answer about one (an oracle is a
 *   reader: a dry-run count over archived bodies answers `match(properties.email, "a*")`).
 *
 * `withPayloadsRead`: what the route reveals to a token that holds payloads:read besides the route's
 * scope; the handler checks it (deliveries.ts withholds the body, replays.ts refuses a trigger).
 */
export type Exposure = 'none' | 'metadata' | 'payload';

export interface RouteExposure {
  reveals: Exposure;
  withPayloadsRead?: Exposure;
}

const none: RouteExposure = { reveals: 'none' };
const metadata: RouteExposure = { reveals: 'metadata' };
const replayCounts: RouteExposure = { reveals: 'metadata', withPayloadsRead: 'payload' };

/** The Personas routes of one kind: definitions, sync state and counts; no member is listed. */
function personasExposure(segment: string): Record<string, RouteExposure> {
  return {
    [`POST /admin/sources/:sourceId/${segment}`]: none,
    [`GET /admin/sources/:sourceId/${segment}`]: metadata,
    ...Object.fromEntries(
      [`/admin/${segment}/:id`, `/admin/sources/:sourceId/${segment}/:id`].flatMap((path) => [
        [`GET ${path}`, metadata],
        [`PATCH ${path}`, none],
        [`DELETE ${path}`, none],
        [`POST ${path}/sync`, none],
      ]),
    ),
  };
}

export const ROUTE_EXPOSURE: Record<string, RouteExposure> = {
  'GET /admin/status': none,
  'GET /admin/sources': none,
  'POST /admin/sources': none,
  'GET /admin/sources/:id': none,
  'PATCH /admin/sources/:id': none,
  'POST /admin/imports': none,
  'DELETE /admin/sources/:id': none,
  'GET /admin/sources/:sourceId/destinations': none,
  'POST /admin/sources/:sourceId/destinations': none,
  // Settings with every secret withheld or masked; a mapping's `data` is a mapping, not a secret (docs/api.md).
  'GET /admin/destinations/:id': none,
  'PATCH /admin/destinations/:id': none,
  'DELETE /admin/destinations/:id': none,
  'GET /admin/destinations/:id/health': metadata,
  'GET /admin/destinations/:id/overview': metadata,
  'POST /admin/destinations/:id/webhooks/:index/enable': none,
  'DELETE /admin/destinations/:id/webhooks/:index/backpressure': none,
  'DELETE /admin/destinations/:id/mappings/:name/backpressure': none,
  // Configuration only (a URL, event types); the secret is never answered after the 201.
  'POST /admin/operational-endpoints': none,
  'GET /admin/operational-endpoints': none,
  'GET /admin/operational-endpoints/:id': none,
  'PATCH /admin/operational-endpoints/:id': none,
  'DELETE /admin/operational-endpoints/:id': none,
  'GET /admin/destinations/:id/filters': none,
  'POST /admin/destinations/:id/filters': none,
  'GET /admin/destinations/:id/filters/:filterId': none,
  'PATCH /admin/destinations/:id/filters/:filterId': none,
  'DELETE /admin/destinations/:id/filters/:filterId': none,
  // The caller's own event through the caller's own draft: nothing stored is read.
  'POST /admin/destinations/:id/filters/preview': none,
  'POST /admin/transformations': none,
  'GET /admin/transformations': none,
  'GET /admin/transformations/:id': none,
  'PATCH /admin/transformations/:id': none,
  'DELETE /admin/transformations/:id': none,
  // The caller's own event through the caller's own draft: nothing stored is read.
  'POST /admin/transformations/preview': none,
  // Rows name users by keyed hash (or by the id the caller searched for).
  'GET /admin/deliveries': metadata,
  // The body and the plaintext userId only with payloads:read; otherwise the userId's keyed hash.
  'GET /admin/sources/:sourceId/deliveries/:messageId': { reveals: 'metadata', withPayloadsRead: 'payload' },
  'GET /admin/fates': { reveals: 'metadata', withPayloadsRead: 'payload' },
  'POST /admin/sources/:sourceId/deliveries/:messageId/redeliver': metadata,
  'POST /admin/sources/:sourceId/redeliver': metadata,
  'GET /admin/redeliveries/:id': metadata,
  'POST /admin/regulations': metadata,
  'GET /admin/regulations': metadata,
  'GET /admin/regulations/:id': metadata,
  // A range's count is metadata; a trigger's count is an oracle on archived bodies: payloads:read (replays.ts).
  'POST /admin/replays': { reveals: 'metadata', withPayloadsRead: 'payload' },
  // Counts of replays started by others. The trigger, and `skipped.blocked` (today's plan over an
  // archived body: a yes/no answer about it), only with payloads:read; without, the blocked ones are
  // counted in `skipped.filtered` (replays.ts replayView).
  'GET /admin/replays': replayCounts,
  'GET /admin/replays/:id': replayCounts,
  'POST /admin/replays/:id/pause': replayCounts,
  'POST /admin/replays/:id/resume': replayCounts,
  'POST /admin/replays/:id/cancel': replayCounts,
  // Plans and rules are schemas, controls are switches: configuration that names no user.
  // A function's code and settings definitions name no user; a test run answers with what its caller sent.
  'POST /admin/functions': none,
  'GET /admin/functions': none,
  'GET /admin/functions/:id': none,
  'PATCH /admin/functions/:id': none,
  'DELETE /admin/functions/:id': none,
  'GET /admin/functions/:id/versions': none,
  'POST /admin/functions/:id/deploy': none,
  'POST /admin/functions/:id/test': none,
  'POST /admin/insert-function-instances': none,
  'GET /admin/insert-function-instances': none,
  'GET /admin/insert-function-instances/:id': none,
  'PATCH /admin/insert-function-instances/:id': none,
  'DELETE /admin/insert-function-instances/:id': none,
  'POST /admin/tracking-plans': none,
  'GET /admin/tracking-plans': none,
  'GET /admin/tracking-plans/:id': none,
  'PATCH /admin/tracking-plans/:id': none,
  'DELETE /admin/tracking-plans/:id': none,
  'GET /admin/tracking-plans/:id/rules': none,
  'PUT /admin/tracking-plans/:id/rules': none,
  'PATCH /admin/tracking-plans/:id/rules': none,
  'DELETE /admin/tracking-plans/:id/rules': none,
  'GET /admin/tracking-plans/:id/sources': none,
  'POST /admin/tracking-plans/:id/sources': none,
  'DELETE /admin/tracking-plans/:id/sources/:sourceId': none,
  'GET /admin/sources/:id/settings': none,
  'PATCH /admin/sources/:id/settings': none,
  // Counts per violation type, times and the last messageId: what happened to messages. The event
  // name, the field and the description quoting them are names, user data in the glossary
  // (docs/privacy.md "What counts as user data"): only with payloads:read (violations.ts).
  'GET /admin/sources/:id/violations': { reveals: 'metadata', withPayloadsRead: 'payload' },
  'GET /admin/sources/:sourceId/function-requests': { reveals: 'metadata', withPayloadsRead: 'payload' },
  // The caller's own event through the saved mappings, header values masked.
  'POST /admin/destinations/:id/mappings/preview': none,
  // The attempt it made (status, duration, error) or the rule that stopped it; never the body sent.
  'POST /admin/destinations/:id/test': metadata,
  ...personasExposure('audiences'),
  ...personasExposure('computed-traits'),
  'POST /admin/tokens': none,
  'GET /admin/tokens': none,
  'DELETE /admin/tokens/:id': none,
  // Who changed what: actors, targets and field names, never values.
  'GET /admin/audit': metadata,
  'POST /codec/*': { reveals: 'payload' },
  'GET /portal/settings.json': none,
};

const RANK: Record<Exposure, number> = { none: 0, metadata: 1, payload: 2 };

/**
 * What a token holding `granted` learns from the route `key` (method and URL pattern): nothing when
 * the route refuses it, else what the table says for it; undefined for a route missing from either table.
 */
export function exposureTo(key: string, granted: readonly Scope[]): Exposure | undefined {
  const access = ROUTE_ACCESS[key];
  const exposure = ROUTE_EXPOSURE[key];
  if (!access || !exposure) return undefined;
  if (!granted.includes(access.scope)) return 'none';
  if (!granted.includes('payloads:read') || exposure.withPayloadsRead === undefined) return exposure.reveals;
  return RANK[exposure.withPayloadsRead] > RANK[exposure.reveals] ? exposure.withPayloadsRead : exposure.reveals;
}
