import type { FastifyInstance, RouteOptions } from 'fastify';
import { sourceSettings } from './source-settings';
import { VERSION } from '../version';
import { routeAccess, routeKey } from './access/route-access';
import { ROUTE_EXPOSURE, type RouteExposure } from './access/route-exposure';

/**
 * The prose of the API reference (/docs): per operation a summary and one example request and
 * response, and what each error status means. Kept beside the routes rather than inside them so
 * the route files stay about behaviour; the schemas (validation, serialization, field
 * descriptions) stay in the routes, and test/integration/api-docs.test.ts checks every operation of
 * /openapi.json has its entry here and that every example passes its own schema.
 */
export interface OperationDoc {
  /** Absent only where the route's own schema has one. */
  summary?: string;
  /** One request body, for operations that take one. */
  request?: unknown;
  /** One body of the operation's success status (absent for 204). */
  response?: unknown;
}

const SOURCE_ID = 'src_6f1c2a9e4b7d4e0f8a3b5c7d9e1f2a4b';
const FUNCTION_ID = 'dfn_5f0c8e2a9b1d4c7e8f3a6b2d';
const FUNCTION_CODE = "async function onTrack(event, settings) {\n  await fetch('https://crm.example.com/api/orders', { method: 'POST', headers: { Authorization: 'Bearer ' + settings.apiKey }, body: JSON.stringify(event) });\n}";
const FUNCTION_CODE_V2 = FUNCTION_CODE.replace('orders', 'v2/orders');
const functionSetting = { name: 'apiKey', label: 'API key', description: 'The CRM key', type: 'STRING', required: true, sensitive: true };
const INSERT_FUNCTION_ID = 'ifnd_6425a1b2c3d4e5f607182940';
const insertFunctionInstance = {
  id: 'ifi_3c1e5a7b9d0f4e2a8c6b1d3f5e7a9c0b',
  name: 'Mask emails',
  integrationId: 'dst_9a7b5c3d1e2f4a6b8c0d1e3f5a7b9c1d',
  classId: INSERT_FUNCTION_ID,
  functionId: INSERT_FUNCTION_ID,
  enabled: true,
  createdAt: '2026-05-04T09:30:00.000Z',
  updatedAt: '2026-05-04T09:30:00.000Z',
  settings: { mask: '***' },
  encryptedSettings: { salt: '••••••••••cdef' },
};
const functionListItem = {
  id: FUNCTION_ID,
  resourceType: 'DESTINATION',
  displayName: 'Order to CRM',
  description: null,
  logoUrl: null,
  latestVersion: 1,
  deployedVersion: 1,
  isLatestVersion: true,
  deployedAt: '2026-05-04T09:30:00.000Z',
  createdAt: '2026-05-04T09:30:00.000Z',
  updatedAt: '2026-05-04T09:30:00.000Z',
};
const functionView = { ...functionListItem, code: FUNCTION_CODE, settings: [functionSetting] };

const DESTINATION_ID = 'dst_0a1b2c3d4e5f40718293a4b5c6d7e8f9';
const AUDIENCE_ID = 'aud_5e6f7a8b9c0d41e2f3a4b5c6d7e8f9a0';
const TRAIT_ID = 'ctr_7b8c9d0e1f2a43b4c5d6e7f8a9b0c1d2';
const TOKEN_ID = 'tok_2a3b4c5d6e7f48a9b0c1d2e3f4a5b6c7';
const AT = '2026-05-04T09:30:00.000Z';
const LATER = '2026-05-04T09:45:00.000Z';

const ok = { success: true };
const track = { userId: 'user-42', event: 'Order Completed', properties: { total: 99.5, currency: 'EUR' }, messageId: 'msg-0001', timestamp: AT };
const ingest = (summary: string, request: unknown): OperationDoc => ({ summary, request, response: ok });

const TRACKING_PLAN_ID = 'tp_8c9d0e1f2a3b44c5d6e7f8a9b0c1d2e3';
const trackingPlan = { id: TRACKING_PLAN_ID, name: 'Web shop plan', description: 'Checkout events', type: 'LIVE', createdAt: AT, updatedAt: AT };
const trackingRule = {
  type: 'TRACK',
  key: 'Order Completed',
  version: 1,
  jsonSchema: {
    $schema: 'http://json-schema.org/draft-07/schema#',
    labels: {},
    type: 'object',
    properties: { properties: { type: 'object', properties: { order_id: { type: 'string', pattern: '^ord_[0-9]+$' }, total: { type: 'number' } }, required: ['order_id'] } },
  },
};
const schemaControls = {
  track: { allowUnplannedEvents: true, allowUnplannedEventProperties: true, allowEventOnViolations: true, allowPropertiesOnViolations: true, commonEventOnViolations: 'ALLOW' },
  identify: { allowUnplannedTraits: true, allowTraitsOnViolations: true, commonEventOnViolations: 'ALLOW' },
  group: { allowUnplannedTraits: true, allowTraitsOnViolations: true, commonEventOnViolations: 'ALLOW' },
};
const source = { id: SOURCE_ID, name: 'Web shop', slug: 'web_shop', labels: [{ key: 'environment', value: 'prod' }], writeKeyHint: 'x9Qe', createdAt: AT };
const webhook = { url: 'https://hooks.example.com/segment', headerNames: ['x-team'] };
const destination = { id: DESTINATION_ID, sourceId: SOURCE_ID, name: 'Order service', enabled: true, maxRequestsPerSecond: 50, paused: false, propagateTraceContext: true, sharedSecretSet: true, signingSecretSet: false, webhooks: [webhook], consent: { categories: ['analytics'], whenAbsent: 'deliver' }, type: 'webhooks', tlsSet: false, createdAt: AT, updatedAt: AT };
const destinationBody = { name: 'Order service', enabled: true, sharedSecret: 'a long shared secret', consent: { categories: ['analytics'] }, webhooks: [{ url: 'https://hooks.example.com/segment', headers: { 'x-team': 'orders' } }] };
const FILTER_ID = 'flt_4d5e6f7a8b9c40d1e2f3a4b5c6d7e8f9';
const TRANSFORMATION_ID = 'tfm_7a8b9c0d1e2f43a5b6c7d8e9f0a1b2c3';
const transformationBody = {
  sourceId: SOURCE_ID,
  name: 'Fix the order event',
  enabled: true,
  if: "event = 'order_completed'",
  newEventName: 'Order Completed',
  propertyRenames: [{ oldName: 'order_id', newName: 'orderId' }],
};
const transformation = { id: TRANSFORMATION_ID, ...transformationBody, destinationMetadataId: null, createdAt: AT, updatedAt: AT };
const filterBody = {
  title: 'No PII to the ads team',
  description: 'Drop emails and IPs; only signed-in users',
  enabled: true,
  if: "type = 'identify' and length( userId ) > 0",
  // Not `properties` as a key here: the OpenAPI conversion reads a key of that name in an example as the schema keyword.
  actions: [{ type: 'DROP_PROPERTIES', fields: { traits: ['email'], context: ['ip'] } }],
};
const filter = { id: FILTER_ID, destinationId: DESTINATION_ID, ...filterBody, createdAt: AT, updatedAt: AT };
const regulation = { id: 'reg_3c4d5e6f7a8b49c0d1e2f3a4b5c6d7e8', regulationType: 'DELETE', subjectType: 'USER_ID', subjectIds: ['user-42'], notifications: 1, deliveriesStopped: 0, deliveriesDeleted: 2, createdAt: AT };
const deliveryRow = {
  messageId: 'msg-0001',
  sourceId: SOURCE_ID,
  type: 'track',
  userId: 'user-42',
  status: 'delivered',
  startedAt: AT,
  closedAt: LATER,
  workflowId: `message:${SOURCE_ID}:msg-0001`,
  runId: '0195a3b2-7c4d-7e8f-9a0b-1c2d3e4f5a6b',
};
const redeliveryFilter = { status: 'failed', since: '2026-05-04T00:00:00.000Z', until: '2026-05-05T00:00:00.000Z' };
const replay = {
  id: 'rpl_2b3c4d5e6f7a48b9c0d1e2f3a4b5c6d7',
  sourceId: SOURCE_ID,
  destinationId: DESTINATION_ID,
  since: '2026-05-04T00:00:00.000Z',
  until: '2026-05-05T00:00:00.000Z',
  trigger: "event = 'Order Completed'",
  status: 'completed',
  matched: 120,
  started: 112,
  delivered: 112,
  failed: 0,
  skipped: { erased: 3, suppressed: 1, filtered: 4, blocked: 0, duplicate: 0 },
  dryRun: false,
  blockedOnly: false,
  createdAt: AT,
  finishedAt: LATER,
};
const sync = (id: string) => ({ workflowId: `personas-sync:${id}:now`, runId: '0195a3b2-8d9e-7f0a-8b1c-2d3e4f5a6b7c' });
const computation = (id: string, name: string, key: string, definition: unknown) => ({
  id,
  sourceId: SOURCE_ID,
  name,
  key,
  definition,
  schedule: '*/15 * * * *',
  paused: false,
  scheduleId: `personas-sync:${id}`,
  lastSync: { version: 3, syncedAt: AT },
  pendingSync: null,
  createdAt: AT,
  updatedAt: AT,
});
const audienceDefinition = { event: 'Order Completed', count: { op: 'gte', value: 1 }, within: '30d' };
const audience = computation(AUDIENCE_ID, 'Recent Buyers', 'recent_buyers', audienceDefinition);
const traitDefinition = { type: 'sum', event: 'Order Completed', property: 'total' };
const trait = computation(TRAIT_ID, 'Order Total', 'order_total', traitDefinition);
const waited = { throttledMs: 1_200, heldMs: 0, backpressuredMs: 5_000 };
const windowStats = { attempts: 120, successes: 118, failures: { retry: 2, permanent: 0 }, successRate: 0.983, p50Ms: 42, p95Ms: 180, waited };

const audienceDocs = {
  get: { summary: 'One audience, with its last and pending sync', response: audience },
  patch: { summary: 'Change an audience: name (same trait key), definition, schedule or paused', request: { paused: true }, response: { ...audience, paused: true } },
  delete: { summary: 'Delete an audience and its Temporal Schedule (receivers get no further identify calls for it)' },
  sync: { summary: 'Start a sync now, outside its schedule', response: sync(AUDIENCE_ID) },
};
const traitDocs = {
  get: { summary: 'One computed trait, with its last and pending sync', response: trait },
  patch: { summary: 'Change a computed trait: name (same trait key), definition, schedule or paused', request: { schedule: '0 * * * *' }, response: { ...trait, schedule: '0 * * * *' } },
  delete: { summary: 'Delete a computed trait and its Temporal Schedule' },
  sync: { summary: 'Start a sync now, outside its schedule', response: sync(TRAIT_ID) },
};

/** An operational endpoint, as the examples show it. */
const operationalEndpoint = {
  id: 'opep_5b0e0d8c9f6a4c1e8e0b7d2a1c3f4e5d',
  url: 'https://ops.example.com/switchyard',
  eventTypes: ['message.attempt.exhausted', 'endpoint.disabled'],
  format: 'standard',
  enabled: true,
  createdAt: AT,
  updatedAt: AT,
};

/** An audience or computed trait answers at /admin/<kind>/:id and under its source alike. */
function itemRoutes(kind: string, docs: Record<'get' | 'patch' | 'delete' | 'sync', OperationDoc>): Record<string, OperationDoc> {
  const routes: Record<string, OperationDoc> = {};
  for (const url of [`/admin/${kind}/:id`, `/admin/sources/:sourceId/${kind}/:id`]) {
    Object.assign(routes, { [`GET ${url}`]: docs.get, [`PATCH ${url}`]: docs.patch, [`DELETE ${url}`]: docs.delete, [`POST ${url}/sync`]: docs.sync });
  }
  return routes;
}

/** Keyed `METHOD url` as Fastify registers the route. */
export const OPERATION_DOCS: Record<string, OperationDoc> = {
  'GET /health': {
    summary: 'For a load balancer: 200 while this API can take ingestion (its store and Temporal answer), whatever the workers do; 503 when it cannot',
    response: { status: 'ok', version: VERSION },
  },
  'GET /admin/status': {
    summary: 'For monitoring: the store, Temporal, its search attributes and the workers on each task queue (200), or what is wrong and the fix (503)',
    response: { status: 'ok', version: VERSION, temporal: true, searchAttributes: true, store: true, worker: true, taskQueues: [{ name: 'switchyard', workers: 1, lastPollAt: AT }], problems: [] },
  },

  'POST /v1/track': ingest('Record an event a user did (one webhook POST per enabled destination)', track),
  'POST /v1/t': ingest('Short alias of /v1/track', track),
  'POST /v1/identify': ingest('Record who a user is and their traits', { userId: 'user-42', traits: { email: 'ada@example.com', plan: 'pro' } }),
  'POST /v1/i': ingest('Short alias of /v1/identify', { userId: 'user-42', traits: { plan: 'pro' } }),
  'POST /v1/page': ingest('Record a page view', { anonymousId: 'anon-7', name: 'Pricing', properties: { path: '/pricing', url: 'https://shop.example.com/pricing', title: 'Pricing', referrer: '' } }),
  'POST /v1/p': ingest('Short alias of /v1/page', { anonymousId: 'anon-7', name: 'Pricing', properties: { path: '/pricing' } }),
  'POST /v1/screen': ingest('Record a mobile screen view', {
    userId: 'user-42',
    name: 'Cart',
    context: { device: { model: 'Pixel 8', type: 'android' }, os: { name: 'Android', version: '15' }, app: { name: 'Shop', version: '3.2.0', build: '320' } },
  }),
  'POST /v1/s': ingest('Short alias of /v1/screen', { userId: 'user-42', name: 'Cart' }),
  'POST /v1/group': ingest('Associate a user with a group (account, company) and its traits', { userId: 'user-42', groupId: 'acme', traits: { name: 'Acme Ltd', employees: 120 } }),
  'POST /v1/g': ingest('Short alias of /v1/group', { userId: 'user-42', groupId: 'acme' }),
  'POST /v1/alias': ingest('Merge a previous identity into a user id', { previousId: 'anon-7', userId: 'user-42' }),
  'POST /v1/a': ingest('Short alias of /v1/alias', { previousId: 'anon-7', userId: 'user-42' }),
  'POST /v1/batch': ingest('Record several calls in one request (at most 500 KB), as the client libraries send them', {
    batch: [
      { type: 'identify', userId: 'user-42', traits: { plan: 'pro' } },
      { type: 'track', ...track },
    ],
  }),
  'POST /v1/b': ingest('Short alias of /v1/batch', { batch: [{ type: 'track', ...track }] }),
  'POST /v1/import': ingest('Same as /v1/batch, for historical data (calls carry their own timestamps)', { batch: [{ type: 'track', ...track, timestamp: '2025-12-01T10:00:00.000Z' }] }),
  'GET /v1/projects/:writeKey/settings': {
    summary: "A browser source's settings, as analytics.js loads them from its CDN URL",
    response: sourceSettings('wk_live_3JvQmXc0b8hP2dLs9Tn4x9Qe', { protocol: 'https', apiHost: 'events.example.com/v1' }),
  },

  'POST /admin/sources': {
    summary: "Create a source (Segment's source shape accepted; an existing write key may be kept); the reply is the only time its write key is shown",
    request: { name: 'Web shop', slug: 'web_shop', enabled: true, labels: [{ key: 'environment', value: 'prod' }], writeKey: 'wk_live_3JvQmXc0b8hP2dLs9Tn4x9Qe' },
    response: { ...source, ignoredFields: ['enabled'], writeKey: 'wk_live_3JvQmXc0b8hP2dLs9Tn4x9Qe' },
  },
  'GET /admin/sources': { summary: 'List sources (write keys appear only as their last 4 characters); `?label=environment:prod` keeps those with that label', response: { sources: [source] } },
  'GET /admin/sources/:id': { summary: 'One source', response: source },
  'PATCH /admin/sources/:id': { summary: 'Change a source: name, slug, labels, or its write key (the old key stops working)', request: { labels: [{ key: 'environment', value: 'prod' }, { key: 'team', value: 'web' }] }, response: { ...source, labels: [{ key: 'environment', value: 'prod' }, { key: 'team', value: 'web' }] } },
  'DELETE /admin/sources/:id': { summary: 'Delete a source, its write key and its destinations' },
  'POST /admin/imports': {
    summary: 'Import a Segment workspace export (Terraform files or Public API JSON): a dry run by default, one report line per object (moved unchanged, moved with changes, or cannot move and why); `apply: true` writes, matched by Segment id, so a second run updates rather than duplicates',
    request: { files: { 'sources/b1TTjVj38UH445ezhJU3Y6.tf': 'import {\n  to = segment_source.id-b1TTjVj38UH445ezhJU3Y6\n  id = "b1TTjVj38UH445ezhJU3Y6"\n}\nresource "segment_source" "id-b1TTjVj38UH445ezhJU3Y6" {\n  enabled = true\n  name = "Web shop"\n  slug = "web_shop"\n  metadata = { id = "IqDTy1TpoU" }\n}\n' }, apply: false, secrets: { b1TTjVj38UH445ezhJU3Y6: { writeKey: 'wk_live_3JvQmXc0b8hP2dLs9Tn4x9Qe' } } },
    response: {
      objects: [{ kind: 'source', segmentId: 'b1TTjVj38UH445ezhJU3Y6', name: 'Web shop', outcome: 'unchanged' }],
      counts: { source: { unchanged: 1, changed: 0, cannot: 0 } },
      problems: [],
      applied: false,
      guide: 'docs/migrating-from-segment.md',
    },
  },

  'POST /admin/tracking-plans': {
    summary: "Create a tracking plan (Segment's Public API body, or Terraform's segment_tracking_plan with its rules inline: `json_schema` as a JSON string, `key` null on keyless rules)",
    request: { name: 'Web shop plan', description: 'Checkout events', type: 'LIVE', rules: [{ type: 'COMMON', key: null, version: 1, json_schema: '{"properties":{"context":{"type":"object"}}}' }] },
    response: trackingPlan,
  },
  'GET /admin/tracking-plans': { summary: 'List tracking plans', response: { trackingPlans: [trackingPlan] } },
  'GET /admin/tracking-plans/:id': { summary: 'One tracking plan', response: trackingPlan },
  'PATCH /admin/tracking-plans/:id': { summary: "Rename a tracking plan or change its description or type", request: { description: 'Checkout and sign-up events' }, response: { ...trackingPlan, description: 'Checkout and sign-up events' } },
  'DELETE /admin/tracking-plans/:id': { summary: 'Delete a tracking plan, its rules and its source connections' },
  'GET /admin/tracking-plans/:id/rules': { summary: "A page of a plan's rules (`count`, `cursor`, or Segment's `pagination[count]`, `pagination[cursor]`)", response: { rules: [{ ...trackingRule, createdAt: AT, updatedAt: AT }], pagination: { current: '', totalEntries: 1 } } },
  'PUT /admin/tracking-plans/:id/rules': { summary: "Replace every rule of a plan (Segment's rules body, or what GET answers, unchanged; each schema compiled first, nothing saved on a 400)", request: { rules: [trackingRule] }, response: { status: 'SUCCESS' } },
  'PATCH /admin/tracking-plans/:id/rules': { summary: 'Upsert rules, or rename one with `newKey`', request: { rules: [{ ...trackingRule, newKey: 'Order Placed' }] }, response: { status: 'SUCCESS' } },
  'DELETE /admin/tracking-plans/:id/rules': { summary: 'Remove rules by type, key and version', request: { rules: [{ type: 'TRACK', key: 'Order Completed', version: 1 }] }, response: { status: 'SUCCESS' } },
  'GET /admin/tracking-plans/:id/sources': { summary: 'The sources connected to a plan', response: { sourceIds: [SOURCE_ID] } },
  'POST /admin/tracking-plans/:id/sources': { summary: 'Connect a source (a source has at most one plan: a second is 409)', request: { sourceId: SOURCE_ID }, response: { trackingPlanId: TRACKING_PLAN_ID, sourceId: SOURCE_ID } },
  'DELETE /admin/tracking-plans/:id/sources/:sourceId': { summary: 'Disconnect a source from its plan' },
  'GET /admin/sources/:id/settings': { summary: "A source's schema controls (Segment's shape; unset, everything is allowed)", response: schemaControls },
  'PATCH /admin/sources/:id/settings': {
    summary: "Change a source's schema controls: each setting given replaces that one",
    request: { track: { allowUnplannedEvents: false, allowEventOnViolations: false } },
    response: { ...schemaControls, track: { ...schemaControls.track, allowUnplannedEvents: false, allowEventOnViolations: false } },
  },
  'GET /admin/sources/:sourceId/function-requests': {
    summary: "A source function's failed requests, newest first (the last 100); the error, the raw request and the logs to payloads:read",
    response: {
      requests: [
        {
          id: '5b0c7f0e-3d1a-4c55-9a57-0f3e2d7c9b10',
          functionId: 'sfnc_0123456789abcdef01234567',
          version: 3,
          receivedAt: AT,
          failedAt: LATER,
          reason: 'function:error: TypeError',
          error: { type: 'TypeError', message: "Cannot read properties of undefined (reading 'email')" },
          request: { headers: { 'content-type': 'application/json' }, body: '{"type":"customer.created"}', url: 'https://events.example.com/functions?b=c3JjXzAxMjM6OndrXzAxMjM=' },
          logs: ['log: customer.created'],
        },
      ],
    },
  },
  'POST /functions': {
    summary: "A source function's webhook (the source's webhookUrl): the raw request is recorded, then onRequest runs on a worker and the calls it emits are ingested",
    response: { success: true, requestId: '5b0c7f0e-3d1a-4c55-9a57-0f3e2d7c9b10' },
  },
  'GET /admin/sources/:id/violations': {
    summary: "A source's tracking-plan violations in a window, per event, field and violation type",
    response: { violations: [{ eventType: 'track', eventName: 'Order Completed', field: 'properties.order_id', violationType: 'Required', description: 'properties.order_id is required', count: 12, firstSeenAt: AT, lastSeenAt: LATER, lastMessageId: 'msg-0001' }] },
  },

  'POST /admin/sources/:sourceId/destinations': { summary: 'Add a destination: up to 5 webhook URLs, optional static headers and shared secret', request: destinationBody, response: destination },
  'GET /admin/sources/:sourceId/destinations': { summary: "List a source's destinations (secrets and header values are never shown)", response: { destinations: [destination] } },
  'GET /admin/destinations/:id': { summary: 'One destination', response: destination },
  'PATCH /admin/destinations/:id': {
    summary: 'Change a destination: switch it on or off, rotate its secrets, replace its webhooks, set its consent categories',
    request: { enabled: false, consent: { whenAbsent: 'drop' } },
    response: { ...destination, enabled: false, consent: { categories: ['analytics'], whenAbsent: 'drop' } },
  },
  'DELETE /admin/destinations/:id': { summary: 'Delete a destination (deliveries under way to it stop)' },
  'GET /admin/destinations/:id/health': {
    summary: "Each webhook URL's attempts, success rate and latency over the last hour and day",
    response: {
      destinationId: DESTINATION_ID,
      at: AT,
      stepMinutes: 5,
      flow: { paused: false, maxRequestsPerSecond: 50, lastHour: waited, lastDay: waited },
      webhooks: [{ index: 0, url: webhook.url, lastHour: windowStats, lastDay: windowStats, series: [{ start: AT, attempts: 10, successes: 10, failures: 0, p50Ms: 40, p95Ms: 90 }] }],
    },
  },
  'GET /admin/destinations/:id/overview': {
    summary: "Where the destination's messages went: received, filtered by reason (plan, integrations, consent, suppressed, filters, sampled, transformation, trigger; stopped at send time), and this destination's own delivered, retrying, failed; replays apart",
    response: {
      since: '2026-11-26T12:00:00.000Z',
      until: '2026-11-27T12:00:00.000Z',
      received: 1200,
      filtered: { plan: 0, integrations: 10, consent: 140, suppressed: 2, filters: 48, sampled: 500, transformation: 0, trigger: 0, stopped: 1 },
      delivered: 494,
      retrying: 3,
      failed: 2,
      replayed: { delivered: 20, retrying: 0, failed: 0, stopped: 0 },
      byFilter: [{ id: FILTER_ID, title: filterBody.title, dropped: 48 }],
      transformations: { changed: 300, dropped: 0, byTransformation: [{ id: TRANSFORMATION_ID, name: transformationBody.name, changed: 300, dropped: 0 }] },
    },
  },
  'POST /admin/destinations/:id/mappings/preview': {
    summary: "What an actions destination's mappings (its saved ones, or a draft given as `mappings`) would send for an event: per mapping whether its trigger matches and the request (secrets masked), or its render error; nothing saved or sent",
    request: { event: { type: 'identify', userId: 'user-42', traits: { email: 'ada@example.com' } } },
    response: {
      mappings: [
        {
          name: 'New user to CRM',
          enabled: true,
          matched: true,
          request: { method: 'PUT', url: 'https://crm.example.com/api/users', headers: { 'content-type': 'application/json', 'user-agent': 'Switchyard/1.0', authorization: '********' }, body: { email: 'ada@example.com' } },
        },
      ],
    },
  },
  'POST /admin/destinations/:id/test': {
    summary:
      "Send a test event to this destination alone as a real delivery: a sample track (or the event given) through its rules, mapping, insert function and signature; answers the first attempt (waiting up to 10 s), or the rule that stopped it",
    request: { event: { type: 'track', event: 'Order Completed', userId: 'user-42', properties: { total: 30 } } },
    response: {
      status: 'attempted',
      sourceId: SOURCE_ID,
      messageId: 'test-3f1c2a9e-4b7d-4e0f-8a3b-5c7d9e1f2a4b',
      attempt: { outcome: 'success', httpStatus: 200, durationMs: 84, webhookIndex: 0, url: 'https://hooks.example.com/segment', startedAt: AT },
    },
  },
  'POST /admin/functions': {
    summary: "Create a function in Segment's Public API shape (a Terraform segment_function body is read too); its code is checked now, and its first version is deployed",
    request: { resourceType: 'DESTINATION', displayName: 'Order to CRM', code: FUNCTION_CODE, settings: [functionSetting] },
    response: functionView,
  },
  'GET /admin/functions': { summary: 'List the functions (without code or settings; filter with ?resourceType=)', response: { functions: [functionListItem] } },
  'GET /admin/functions/:id': { summary: 'One function with its latest code and its settings definitions', response: functionView },
  'PATCH /admin/functions/:id': {
    summary: 'Change a function: new code is a new version, which runs once deployed; what GET answers saves back unchanged',
    request: { code: FUNCTION_CODE_V2 },
    response: { ...functionView, code: FUNCTION_CODE_V2, latestVersion: 2, isLatestVersion: false },
  },
  'DELETE /admin/functions/:id': { summary: 'Delete a function and its versions' },
  'GET /admin/functions/:id/versions': {
    summary: 'Every saved version of a function, newest first, and which one is deployed',
    response: { versions: [{ id: '2', version: 2, code: FUNCTION_CODE_V2, isDeployed: false, createdAt: LATER }, { id: '1', version: 1, code: FUNCTION_CODE, isDeployed: true, createdAt: AT }] },
  },
  'POST /admin/functions/:id/deploy': { summary: 'Deploy the latest version, or the version named', request: { version: 2 }, response: { functionDeployment: { status: 'SUCCESS' }, deployedVersion: 2 } },
  'POST /admin/functions/:id/test': {
    summary: 'Run the latest version on an event (or, for a source function, a request) for real, fetch calls included, without deploying it; nothing is delivered or ingested',
    request: { event: { type: 'track', event: 'Order Completed', userId: 'u1', properties: { total: 30 } }, settings: { apiKey: 'sk_live_0123456789abcdef' } },
    response: {
      status: 'SUCCESS',
      result: { status: 200 },
      logs: ['log: sent Order Completed with ••••••••••cdef'],
      requests: [{ method: 'POST', url: 'https://crm.example.com/api/orders', status: 200, durationMs: 84 }],
      durationMs: 97,
    },
  },
  'POST /admin/insert-function-instances': {
    summary: "Attach an INSERT_DESTINATION function to one webhooks or actions destination (at most one per destination), in Segment's alpha shape: the event its handler returns is what the destination renders and sends",
    request: { functionId: INSERT_FUNCTION_ID, integrationId: 'dst_9a7b5c3d1e2f4a6b8c0d1e3f5a7b9c1d', enabled: true, name: 'Mask emails', settings: { mask: '***' }, encryptedSettings: { salt: 'salt-0123456789abcdef' } },
    response: insertFunctionInstance,
  },
  'GET /admin/insert-function-instances': { summary: 'List the insert function instances (filter with ?functionId=)', response: { insertFunctionInstances: [insertFunctionInstance] } },
  'GET /admin/insert-function-instances/:id': { summary: 'One insert function instance, its sensitive settings masked', response: insertFunctionInstance },
  'PATCH /admin/insert-function-instances/:id': { summary: 'Change its name, switch or settings (what GET answers saves back unchanged; a masked value keeps its secret)', request: { enabled: false }, response: { ...insertFunctionInstance, enabled: false } },
  'DELETE /admin/insert-function-instances/:id': { summary: 'Detach the insert function from its destination' },
  'POST /admin/operational-endpoints': {
    summary: "Register an operational endpoint: Switchyard's own events (Svix's names) signed with Standard Webhooks; a generated whsec_ secret is shown once, here",
    request: { url: 'https://ops.example.com/switchyard', eventTypes: ['message.attempt.exhausted', 'endpoint.disabled'] },
    response: { ...operationalEndpoint, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' },
  },
  'GET /admin/operational-endpoints': { summary: 'List the operational endpoints (never their secrets)', response: { endpoints: [operationalEndpoint] } },
  'GET /admin/operational-endpoints/:id': { summary: 'One operational endpoint (never its secret)', response: operationalEndpoint },
  'PATCH /admin/operational-endpoints/:id': { summary: 'Change an operational endpoint: URL, event types, format, enabled, or a new secret', request: { enabled: false }, response: { ...operationalEndpoint, enabled: false } },
  'DELETE /admin/operational-endpoints/:id': { summary: 'Delete an operational endpoint (events already raised for it are not sent)' },
  'POST /admin/destinations/:id/filters': {
    summary: "Add a destination filter in Segment's Public API shape (at most 10 per destination); a bad FQL `if` is a 400 naming its column",
    request: filterBody,
    response: filter,
  },
  'GET /admin/destinations/:id/filters': { summary: "List a destination's filters, in the order they were created", response: { filters: [filter] } },
  'GET /admin/destinations/:id/filters/:filterId': { summary: 'One destination filter', response: filter },
  'PATCH /admin/destinations/:id/filters/:filterId': { summary: 'Change a destination filter: switch it on or off, or change its condition or actions', request: { enabled: false }, response: { ...filter, enabled: false } },
  'DELETE /admin/destinations/:id/filters/:filterId': { summary: 'Delete a destination filter (messages accepted after are not filtered by it)' },
  'POST /admin/destinations/:id/filters/preview': {
    summary: 'What the destination would be sent for an event: under its saved filters, or under one draft filter',
    request: { event: { type: 'identify', messageId: 'msg-0001', userId: 'user-42', traits: { plan: 'pro', email: 'ada@example.com' }, context: { ip: '203.0.113.7' } }, filter: filterBody },
    response: { delivered: true, body: { type: 'identify', messageId: 'msg-0001', userId: 'user-42', traits: { plan: 'pro' }, context: {} }, matched: ['No PII to the ads team'], filter: null },
  },
  'POST /admin/transformations': {
    summary: "Add a transformation in Segment's Public API shape (a Terraform segment_transformation body is read too): for the whole source, or scoped to Webhooks, Webhooks (Actions) or one destination function; a bad FQL `if` is a 400 naming its column",
    request: transformationBody,
    response: transformation,
  },
  'GET /admin/transformations': { summary: 'List the transformations (of one source with ?sourceId=), in the order they were made', response: { transformations: [transformation] } },
  'GET /admin/transformations/:id': { summary: 'One transformation', response: transformation },
  'PATCH /admin/transformations/:id': { summary: 'Change a transformation, or switch it off; what GET answers saves back unchanged', request: { enabled: false }, response: { ...transformation, enabled: false } },
  'DELETE /admin/transformations/:id': { summary: 'Delete a transformation (messages accepted after are not transformed by it)' },
  'POST /admin/transformations/preview': {
    summary: 'What a transformation makes of an event: the event as transformed, or that it is dropped; nothing saved',
    request: { event: { type: 'track', messageId: 'msg-0001', userId: 'user-42', event: 'order_completed', properties: { order_id: 'o-17', total: 30 } }, transformation: transformationBody },
    response: { matched: true, dropped: false, changed: true, event: { type: 'track', messageId: 'msg-0001', userId: 'user-42', event: 'Order Completed', properties: { orderId: 'o-17', total: 30 } } },
  },
  'POST /admin/destinations/:id/webhooks/:index/enable': { summary: 'Switch a webhook URL back on after a 410 Gone switched it off', response: { index: 0, url: webhook.url, enabled: true, wasDisabled: true } },
  'DELETE /admin/destinations/:id/webhooks/:index/backpressure': {
    summary: "End a webhook URL's backpressure pause (a 429/503 with Retry-After) now; the messages held for it are woken and send at once (204 whether or not it was paused)",
  },
  'DELETE /admin/destinations/:id/mappings/:name/backpressure': {
    summary: "End an actions mapping URL's backpressure pause (a 429/503 with Retry-After) now; the messages held for it are woken and send at once (204 whether or not it was paused)",
  },

  'POST /admin/regulations': {
    summary: 'Erase a user (stop their deliveries, forward a delete notification, shred their stored data), suppress them, or lift a suppression',
    request: { regulationType: 'SUPPRESS_WITH_DELETE', subjectType: 'USER_ID', subjectIds: ['user-42'] },
    response: { ...regulation, regulationType: 'SUPPRESS_WITH_DELETE' },
  },
  'GET /admin/regulations': {
    summary: 'List regulations, newest first, each with its type',
    response: { regulations: [{ id: 'reg_4d5e6f7a8b9c40d1e2f3a4b5c6d7e8f9', regulationType: 'UNSUPPRESS', subjectType: 'USER_ID', subjectIds: ['user-7'], createdAt: LATER }, regulation] },
  },
  'GET /admin/regulations/:id': { summary: 'One regulation and what it did', response: regulation },

  'GET /admin/deliveries': {
    summary: 'List deliveries, newest first, filtered by source, destination, status, type, user or time',
    response: { deliveries: [deliveryRow], nextCursor: 'eyJhdCI6IjIwMjYtMDUtMDRUMDk6MzA6MDBaIn0' },
  },
  'GET /admin/fates': {
    summary: 'What happened to each call at each destination: delivered, failed, or stopped at ingest and why; searched by user, event, destination, status or time',
    response: {
      fates: [
        { messageId: 'msg-1', sourceId: SOURCE_ID, sourceName: 'Web', destinationId: DESTINATION_ID, destinationName: 'Orders CRM', type: 'track', receivedAt: AT, decision: 'consent', status: 'stopped', reason: 'consent', userId: 'user-42', event: 'Order Completed' },
        { messageId: 'msg-0', sourceId: SOURCE_ID, sourceName: 'Web', destinationId: DESTINATION_ID, destinationName: 'Orders CRM', type: 'track', receivedAt: AT, decision: 'sent', status: 'delivered', userId: 'user-42', event: 'Order Completed' },
      ],
      nextCursor: 'WyIyMDI2LTA1LTA0VDA5OjMwOjAwLjAwMFoiLCJtc2ctMCIsImRzdF8wIl0',
    },
  },
  'GET /admin/sources/:sourceId/deliveries/:messageId': {
    summary: 'One delivery: the message as sent and every attempt to every webhook URL',
    response: {
      ...deliveryRow,
      message: { type: 'track', version: 1, userId: 'user-42', event: 'Order Completed', properties: { total: 99.5 }, timestamp: AT, context: {} },
      destinations: [{ destinationId: DESTINATION_ID, status: 'delivered', attempts: [{ webhookIndex: 0, url: webhook.url, round: 1, startedAt: AT, durationMs: 42, httpStatus: 200, outcome: 'success' }] }],
    },
  },
  'POST /admin/sources/:sourceId/deliveries/:messageId/redeliver': {
    summary: 'Deliver an ended message again, to the destinations enabled now',
    response: { messageId: 'msg-0001', workflowId: deliveryRow.workflowId, runId: '0195a3b3-1a2b-7c3d-8e4f-5a6b7c8d9e0f' },
  },
  'POST /admin/sources/:sourceId/redeliver': {
    summary: 'Redeliver every failed (or stopped) delivery of a source in a time range, as a background job',
    request: redeliveryFilter,
    response: { id: 'rdl_9f8e7d6c5b4a43210fedcba987654321' },
  },
  'GET /admin/redeliveries/:id': {
    summary: "A bulk redelivery job's progress",
    response: { id: 'rdl_9f8e7d6c5b4a43210fedcba987654321', status: 'completed', matched: 12, started: 12, finished: 12, skipped: 0, sourceId: SOURCE_ID, filter: redeliveryFilter, createdAt: AT },
  },
  'POST /admin/replays': {
    summary: "Replay a source's archived messages received in a range to one of its destinations (a dry run first: `dryRun: true`), or recover what its tracking plan blocked to all of them (`blockedOnly: true`)",
    request: { sourceId: SOURCE_ID, destinationId: DESTINATION_ID, since: '2026-05-04T00:00:00.000Z', until: '2026-05-05T00:00:00.000Z', trigger: "event = 'Order Completed'", dryRun: true },
    response: { id: replay.id, status: 'running' },
  },
  'GET /admin/replays': { summary: 'List replays, newest first', response: { replays: [replay] } },
  'GET /admin/replays/:id': { summary: "A replay's progress", response: replay },
  'POST /admin/replays/:id/pause': { summary: 'Pause a replay: it starts no delivery until resumed', response: { ...replay, status: 'paused', finishedAt: null } },
  'POST /admin/replays/:id/resume': { summary: 'Resume a paused replay', response: { ...replay, status: 'running', finishedAt: null } },
  'POST /admin/replays/:id/cancel': { summary: 'Cancel a replay: it starts nothing more', response: { ...replay, status: 'cancelled' } },

  'POST /admin/sources/:sourceId/audiences': {
    summary: 'Create an audience: members get `<snake_case name>: true` in identify calls, leavers `false`',
    request: { name: 'Recent Buyers', definition: audienceDefinition },
    response: audience,
  },
  'GET /admin/sources/:sourceId/audiences': { summary: "List a source's audiences", response: { audiences: [audience] } },
  ...itemRoutes('audiences', audienceDocs),

  'POST /admin/sources/:sourceId/computed-traits': {
    summary: 'Create a computed trait (count, sum, avg, min, max, most_frequent, first, last of an event)',
    request: { name: 'Order Total', definition: traitDefinition },
    response: trait,
  },
  'GET /admin/sources/:sourceId/computed-traits': { summary: "List a source's computed traits", response: { computedTraits: [trait] } },
  ...itemRoutes('computed-traits', traitDocs),

  'POST /admin/tokens': {
    summary: 'Create an admin token with some of the calling token\'s scopes; the token is shown in this reply only',
    request: { name: 'Support desk', scopes: ['read'], expiresAt: '2027-05-04T00:00:00.000Z' },
    response: { id: TOKEN_ID, name: 'Support desk', scopes: ['read'], expiresAt: '2027-05-04T00:00:00.000Z', token: 'swy_3q2-7wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
  },
  'GET /admin/tokens': {
    summary: 'List admin tokens (never the tokens themselves), with when each was last used',
    response: { tokens: [{ id: TOKEN_ID, name: 'Support desk', scopes: ['read'], createdAt: AT, expiresAt: '2027-05-04T00:00:00.000Z', lastUsedAt: LATER, revokedAt: null }] },
  },
  'DELETE /admin/tokens/:id': { summary: 'Revoke an admin token: every API process refuses it from the next request' },
  'GET /admin/audit': {
    summary: 'The audit log, newest first: every admin change and every refused request, naming fields, never their values',
    response: {
      entries: [
        { id: 'adt_8e9f0a1b2c3d44e5f6a7b8c9d0e1f2a3', at: LATER, actor: { tokenId: TOKEN_ID, name: 'Support desk' }, action: 'destination.update', target: DESTINATION_ID, outcome: 'success', requestId: 'req-1f', ip: '203.0.113.7', changed: ['paused', 'sharedSecret'] },
      ],
      nextCursor: 'WyIyMDI2LTA1LTA0VDA5OjQ1OjAwLjAwMFoiLCJhZHRfOGU5ZiJd',
    },
  },

  'POST /codec/*': {
    request: { payloads: [{ metadata: { encoding: 'YmluYXJ5L2VuY3J5cHRlZA==' }, data: 'c2VhbGVkIGJ5dGVz' }] },
    response: { payloads: [{ metadata: { encoding: 'anNvbi9wbGFpbg==' }, data: 'eyJ0eXBlIjoidHJhY2sifQ==' }] },
  },
};

/** What each error status means on this API; every error body is `{ code, message }`. */
export const ERROR_MEANINGS: Record<string, string> = {
  '400': 'Invalid request: `code` is invalid_request (or invalid_json) and `message` names the field and the rule broken',
  '401': 'Missing or wrong credentials: the write key (Basic, ingestion) or the admin token (Bearer, admin: unknown, revoked or expired)',
  '403': "The admin token lacks the route's scope",
  '404': 'No such record (or not under this source)',
  '409': 'Conflicts with the current state (e.g. a delivery still running, a name whose trait key is taken, a replay that has ended, the archive switched off)',
  '413': "The body is over the route's limit (a source function's webhook takes 512 KiB); `message` names it",
  '422': "Well formed but not something Switchyard can do: a Segment catalog destination other than Webhooks, Webhooks (Actions) or a destination function; `message` names it",
  '429': 'Rate limit of the write key exceeded: retry after the Retry-After header',
  '503': 'A dependency (Temporal or the store) is unreachable: retry later',
};

/** The tag that groups an operation in /docs. */
function tagOf(url: string): string {
  if (url.startsWith('/v1/') || url === '/functions') return 'Ingestion';
  if (url.startsWith('/codec')) return 'Codec server';
  if (url === '/health' || url === '/admin/status') return 'Health';
  if (url.startsWith('/admin/tokens') || url.startsWith('/admin/audit')) return 'Admin: access';
  if (url.includes('audiences') || url.includes('computed-traits')) return 'Admin: Personas';
  if (url.includes('deliver')) return 'Admin: deliveries';
  if (url.includes('regulations')) return 'Admin: regulations';
  if (url.startsWith('/admin/operational-endpoints')) return 'Admin: operational webhooks';
  if (url.startsWith('/admin/functions') || url.startsWith('/admin/insert-function-instances')) return 'Admin: functions';
  if (url.includes('destinations')) return 'Admin: destinations';
  return 'Admin: sources';
}

const withExample = (schema: unknown, example: unknown) => (schema && typeof schema === 'object' ? { ...schema, examples: [example] } : schema);

/** Adds summaries, tags, error meanings and examples to each documented route's schema as it is registered. */
/** What a route can reveal of user data (access/route-exposure.ts), in words for its description. */
function revealsText({ reveals, withPayloadsRead }: RouteExposure): string {
  const more = withPayloadsRead !== undefined && withPayloadsRead !== reveals ? `; ${withPayloadsRead} to a token that also holds \`payloads:read\`` : '';
  return `Reveals of user data: ${reveals}${more}.`;
}

export function documentRoutes(app: FastifyInstance): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    const schema = route.schema;
    if (!schema || schema.hide) return;
    for (const method of [route.method].flat()) {
      if (method === 'HEAD') continue;
      const doc = OPERATION_DOCS[`${method} ${route.url}`];
      const responses = { ...(schema.response as Record<string, Record<string, unknown>> | undefined) };
      for (const [status, reply] of Object.entries(responses)) {
        const meaning = ERROR_MEANINGS[status];
        if (meaning && !reply.description) responses[status] = { ...reply, description: meaning };
      }
      const access = routeAccess(method, route.url);
      const exposure = ROUTE_EXPOSURE[routeKey(method, route.url)];
      if (access && !responses['403']) responses['403'] = { ...(responses['401'] ?? {}), description: ERROR_MEANINGS['403'] };
      const success = Object.keys(responses).find((status) => status.startsWith('2'));
      if (doc?.response !== undefined && success) responses[success] = withExample(responses[success], doc.response) as Record<string, unknown>;
      route.schema = {
        ...schema,
        summary: schema.summary ?? doc?.summary,
        ...(access && {
          description: [schema.description, `Scope: \`${access.scope}\`.`, exposure && revealsText(exposure)].filter(Boolean).join(' '),
          security: [{ adminToken: [] }],
          // Machine-readable, for a client that builds least-privilege tokens (docs/security.md).
          'x-switchyard-scope': access.scope,
          ...(exposure && { 'x-switchyard-reveals': exposure.reveals, ...(exposure.withPayloadsRead && { 'x-switchyard-reveals-with-payloads-read': exposure.withPayloadsRead }) }),
        }),
        tags: [tagOf(route.url)],
        ...(doc?.request !== undefined && schema.body ? { body: withExample(schema.body, doc.request) } : {}),
        response: responses,
      };
    }
  });
}
