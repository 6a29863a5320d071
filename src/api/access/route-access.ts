import type { Scope } from '../../access/scopes';

/**
 * What each admin, codec and portal-settings route requires, in one table: its scope,
 * and for a change the audit log's name of the action. A route missing here answers 403 to every
 * token (deny by default), and test/integration/access-matrix.test.ts fails naming it; a new route
 * is one line here. Keys are Fastify's: the method and the route's URL pattern with its prefix.
 */
export interface RouteAccess {
  scope: Scope;
  /** Present on routes that change something: one audit row per successful call, under this name. */
  action?: string;
}

const read: RouteAccess = { scope: 'read' };

/** The Personas routes of one kind (audiences, computed traits): the same shape twice. */
function personasRoutes(segment: string, noun: string): Record<string, RouteAccess> {
  return {
    [`POST /admin/sources/:sourceId/${segment}`]: { scope: 'destinations:write', action: `${noun}.create` },
    [`GET /admin/sources/:sourceId/${segment}`]: read,
    ...Object.fromEntries(
      [`/admin/${segment}/:id`, `/admin/sources/:sourceId/${segment}/:id`].flatMap((path) => [
        [`GET ${path}`, read],
        [`PATCH ${path}`, { scope: 'destinations:write', action: `${noun}.update` }],
        [`DELETE ${path}`, { scope: 'destinations:write', action: `${noun}.delete` }],
        [`POST ${path}/sync`, { scope: 'operate', action: `${noun}.sync` }],
      ]),
    ),
  };
}

export const ROUTE_ACCESS: Record<string, RouteAccess> = {
  'GET /admin/status': read,
  'GET /admin/sources': read,
  'POST /admin/sources': { scope: 'destinations:write', action: 'source.create' },
  'GET /admin/sources/:id': read,
  'PATCH /admin/sources/:id': { scope: 'destinations:write', action: 'source.update' },
  // A dry run writes nothing (no audit row); an applied import is audited once, and each write it makes as its own route.
  'POST /admin/imports': { scope: 'destinations:write', action: 'segment.import' },
  'DELETE /admin/sources/:id': { scope: 'destinations:write', action: 'source.delete' },
  'GET /admin/sources/:sourceId/destinations': read,
  'POST /admin/sources/:sourceId/destinations': { scope: 'destinations:write', action: 'destination.create' },
  'GET /admin/destinations/:id': read,
  'PATCH /admin/destinations/:id': { scope: 'destinations:write', action: 'destination.update' },
  'DELETE /admin/destinations/:id': { scope: 'destinations:write', action: 'destination.delete' },
  // A test is a real delivery (signed, to the receiver): a change, audited once per test.
  'POST /admin/destinations/:id/test': { scope: 'destinations:write', action: 'destination.test' },
  'GET /admin/destinations/:id/health': read,
  'GET /admin/destinations/:id/overview': read,
  'POST /admin/destinations/:id/webhooks/:index/enable': { scope: 'destinations:write', action: 'webhook.enable' },
  'DELETE /admin/destinations/:id/webhooks/:index/backpressure': { scope: 'operate', action: 'webhook.backpressure.clear' },
  'DELETE /admin/destinations/:id/mappings/:name/backpressure': { scope: 'operate', action: 'mapping.backpressure.clear' },
  // Operational endpoints; their secret is write-only (never in an answer after the 201).
  'POST /admin/operational-endpoints': { scope: 'destinations:write', action: 'operational_endpoint.create' },
  'GET /admin/operational-endpoints': read,
  'GET /admin/operational-endpoints/:id': read,
  'PATCH /admin/operational-endpoints/:id': { scope: 'destinations:write', action: 'operational_endpoint.update' },
  'DELETE /admin/operational-endpoints/:id': { scope: 'destinations:write', action: 'operational_endpoint.delete' },
  'GET /admin/destinations/:id/filters': read,
  'POST /admin/destinations/:id/filters': { scope: 'destinations:write', action: 'filter.create' },
  'GET /admin/destinations/:id/filters/:filterId': read,
  'PATCH /admin/destinations/:id/filters/:filterId': { scope: 'destinations:write', action: 'filter.update' },
  'DELETE /admin/destinations/:id/filters/:filterId': { scope: 'destinations:write', action: 'filter.delete' },
  // Runs the caller's own draft over the caller's own event: reads no stored body, changes nothing.
  'POST /admin/destinations/:id/filters/preview': read,
  // Metadata only; the detail's message body needs payloads:read besides (deliveries.ts).
  'GET /admin/deliveries': read,
  'GET /admin/sources/:sourceId/deliveries/:messageId': read,
  // What happened to each call at each destination; its ids and event name, and searching by them, need payloads:read besides (message-fates.ts).
  'GET /admin/fates': read,
  'POST /admin/sources/:sourceId/deliveries/:messageId/redeliver': { scope: 'operate', action: 'delivery.redeliver' },
  'POST /admin/sources/:sourceId/redeliver': { scope: 'operate', action: 'redelivery.start' },
  'GET /admin/redeliveries/:id': read,
  // Regulation records name users (hashed, or in clear with PAYLOAD_ENCRYPTION=off): not for `read`.
  'POST /admin/regulations': { scope: 'regulations', action: 'regulation.create' },
  'GET /admin/regulations': { scope: 'regulations' },
  'GET /admin/regulations/:id': { scope: 'regulations' },
  // Replays of the archive send events again; their progress is counts, no bodies.
  'POST /admin/replays': { scope: 'operate', action: 'replay.start' },
  'GET /admin/replays': read,
  'GET /admin/replays/:id': read,
  'POST /admin/replays/:id/pause': { scope: 'operate', action: 'replay.pause' },
  'POST /admin/replays/:id/resume': { scope: 'operate', action: 'replay.resume' },
  'POST /admin/replays/:id/cancel': { scope: 'operate', action: 'replay.cancel' },
  // Functions in Segment's shape; a test run sends the function's real requests, so it needs write.
  'POST /admin/transformations': { scope: 'destinations:write', action: 'transformation.create' },
  'GET /admin/transformations': read,
  'GET /admin/transformations/:id': read,
  'PATCH /admin/transformations/:id': { scope: 'destinations:write', action: 'transformation.update' },
  'DELETE /admin/transformations/:id': { scope: 'destinations:write', action: 'transformation.delete' },
  // A draft, nothing saved: read, as the filters' preview.
  'POST /admin/transformations/preview': read,
  'POST /admin/functions': { scope: 'destinations:write', action: 'function.create' },
  'GET /admin/functions': read,
  'GET /admin/functions/:id': read,
  'PATCH /admin/functions/:id': { scope: 'destinations:write', action: 'function.update' },
  'DELETE /admin/functions/:id': { scope: 'destinations:write', action: 'function.delete' },
  'GET /admin/functions/:id/versions': read,
  'POST /admin/functions/:id/deploy': { scope: 'destinations:write', action: 'function.deploy' },
  'POST /admin/functions/:id/test': { scope: 'destinations:write', action: 'function.test' },
  'POST /admin/insert-function-instances': { scope: 'destinations:write', action: 'insert_function_instance.create' },
  'GET /admin/insert-function-instances': read,
  'GET /admin/insert-function-instances/:id': read,
  'PATCH /admin/insert-function-instances/:id': { scope: 'destinations:write', action: 'insert_function_instance.update' },
  'DELETE /admin/insert-function-instances/:id': { scope: 'destinations:write', action: 'insert_function_instance.delete' },
  // Tracking plans, their rules and sources; a source's schema controls; its violations.
  'POST /admin/tracking-plans': { scope: 'destinations:write', action: 'tracking_plan.create' },
  'GET /admin/tracking-plans': read,
  'GET /admin/tracking-plans/:id': read,
  'PATCH /admin/tracking-plans/:id': { scope: 'destinations:write', action: 'tracking_plan.update' },
  'DELETE /admin/tracking-plans/:id': { scope: 'destinations:write', action: 'tracking_plan.delete' },
  'GET /admin/tracking-plans/:id/rules': read,
  'PUT /admin/tracking-plans/:id/rules': { scope: 'destinations:write', action: 'tracking_plan.rules.replace' },
  'PATCH /admin/tracking-plans/:id/rules': { scope: 'destinations:write', action: 'tracking_plan.rules.update' },
  'DELETE /admin/tracking-plans/:id/rules': { scope: 'destinations:write', action: 'tracking_plan.rules.delete' },
  'GET /admin/tracking-plans/:id/sources': read,
  'POST /admin/tracking-plans/:id/sources': { scope: 'destinations:write', action: 'tracking_plan.source.connect' },
  'DELETE /admin/tracking-plans/:id/sources/:sourceId': { scope: 'destinations:write', action: 'tracking_plan.source.disconnect' },
  'GET /admin/sources/:id/settings': read,
  'PATCH /admin/sources/:id/settings': { scope: 'destinations:write', action: 'source.settings.update' },
  'GET /admin/sources/:id/violations': read,
  'GET /admin/sources/:sourceId/function-requests': read,
  // Renders the caller's own event through the saved mappings (secrets masked); sends nothing.
  'POST /admin/destinations/:id/mappings/preview': read,
  ...personasRoutes('audiences', 'audience'),
  ...personasRoutes('computed-traits', 'computed_trait'),
  'POST /admin/tokens': { scope: 'admin', action: 'token.create' },
  'GET /admin/tokens': { scope: 'admin' },
  'DELETE /admin/tokens/:id': { scope: 'admin', action: 'token.revoke' },
  'GET /admin/audit': { scope: 'admin' },
  // Decrypted payloads, both ways (the Web UI and the CLI's --codec-endpoint).
  'POST /codec/*': { scope: 'payloads:read' },
  // The portal's login: any token that may read what the portal shows.
  'GET /portal/settings.json': read,
};

/** The table's key of a route; HEAD (Fastify's automatic twin of each GET) asks what its GET asks. */
export const routeKey = (method: string, url: string) => `${method === 'HEAD' ? 'GET' : method} ${url}`;

export const routeAccess = (method: string, url: string | undefined): RouteAccess | undefined => (url === undefined ? undefined : ROUTE_ACCESS[routeKey(method, url)]);

/** The routes the access check guards: every one of them must be in the table. */
export const isGuardedUrl = (url: string) => url.startsWith('/admin') || url.startsWith('/codec') || url === '/portal/settings.json';
