import { Type, type Static } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { webhookLabel } from '../../delivery/summary';
import { healthSinceMinute, SERIES_STEP_MINUTES, summarizeUrlHealth, type HealthBucket, type HealthTotals } from '../../delivery/webhook-health';
import type { Deliveries, OperationalEvents } from '../../ports';
import type { Store } from '../../store/types';
import { notFound } from '../errors';
import { audited } from '../access/audit-trail';
import { mappingBackpressure } from './actions-settings';
import { errorReplies, IdParams } from './schemas';
import { wakeHeldDeliveries } from './wake-held';

const Count = Type.Integer({ minimum: 0 });
const Ms = Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
  description: 'Estimated from a fixed latency histogram (within its bucket: 2, 5, 10, 20, 35, 50, 75, 100, 150, 250, 400, 600 ms, 1, 1.5, 2.5, 4, 6, 10, 20, 30 s); null without attempts.',
});

const Totals = Type.Object({
  attempts: Count,
  successes: Count,
  failures: Type.Object(
    { retry: Count, permanent: Count },
    { description: 'retry: 5xx, 408, 429, timeouts and connection errors (can succeed later); permanent: other 4xx, 3xx, 410, refused certificates or addresses.' },
  ),
  successRate: Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], { description: 'successes / attempts; null without attempts.' }),
  p50Ms: Ms,
  p95Ms: Ms,
  waited: Type.Object(
    { throttledMs: Count, heldMs: Count, backpressuredMs: Count },
    {
      description:
        'Time messages waited to this URL without sending, summed over messages (ms): under the destination\'s maxRequestsPerSecond, while it was paused, and while the URL was under backpressure (429/503 with Retry-After). Recorded when a wait ends.',
    },
  ),
});

const Point = Type.Object({
  start: Type.String({ format: 'date-time' }),
  attempts: Count,
  successes: Count,
  failures: Count,
  p50Ms: Ms,
  p95Ms: Ms,
});

const WebhookHealthView = Type.Object({
  index: Type.Integer({ minimum: 0, description: 'Position in the destination\'s webhook list (0-based), as in the enable route.' }),
  url: Type.String({ description: 'Scheme, host and path: no user info, query or token-like segment.' }),
  disabled: Type.Optional(
    Type.Object({ reason: Type.String(), at: Type.String({ format: 'date-time' }) }, { description: 'Present while the URL is switched off (a 410 Gone, or an operator): nothing is sent to it.' }),
  ),
  backpressure: Type.Optional(
    Type.Object({ until: Type.String({ format: 'date-time' }), reason: Type.String() }, { description: 'Present while the URL is paused for every message: it answered 429 or 503 with Retry-After.' }),
  ),
  lastHour: Totals,
  lastDay: Totals,
  lastError: Type.Optional(Type.Object({ reason: Type.String(), at: Type.String({ format: 'date-time' }) }, { description: 'The latest failed attempt of the last day.' })),
  series: Type.Array(Point, { description: `The last day in ${SERIES_STEP_MINUTES}-minute steps, oldest first; the last step is the current one, partial.` }),
});

const MappingHealthView = Type.Object({
  name: Type.String({ description: "The mapping's name, as in the clear route." }),
  url: Type.String({ description: 'Scheme, host and path: no user info, query or token-like segment.' }),
  backpressure: Type.Optional(
    Type.Object(
      { until: Type.String({ format: 'date-time' }), reason: Type.String() },
      { description: "Present while the mapping's URL is paused for every message: it answered 429 or 503 with Retry-After. DELETE …/mappings/:name/backpressure ends it." },
    ),
  ),
  lastHour: Totals,
  lastDay: Totals,
  lastError: Type.Optional(Type.Object({ reason: Type.String(), at: Type.String({ format: 'date-time' }) }, { description: 'The latest failed attempt of the last day.' })),
  series: Type.Array(Point, { description: `The last day in ${SERIES_STEP_MINUTES}-minute steps, oldest first; the last step is the current one, partial.` }),
});

const HealthView = Type.Object({
  destinationId: Type.String(),
  at: Type.String({ format: 'date-time', description: 'The time the figures end at.' }),
  stepMinutes: Type.Integer({ description: 'Width of one series step.' }),
  flow: Type.Object(
    {
      paused: Type.Boolean(),
      pausedAt: Type.Optional(Type.String({ format: 'date-time' })),
      maxRequestsPerSecond: Type.Union([Type.Integer(), Type.Null()]),
      lastHour: Type.Object({ throttledMs: Count, heldMs: Count, backpressuredMs: Count }),
      lastDay: Type.Object({ throttledMs: Count, heldMs: Count, backpressuredMs: Count }),
    },
    { description: 'Flow control now (paused, rate limit) and the time messages waited without sending, all URLs together (ms).' },
  ),
  webhooks: Type.Array(WebhookHealthView),
  mappings: Type.Optional(Type.Array(MappingHealthView, { description: "An actions destination's mappings, each with its URL's health and backpressure." })),
});

const WebhookParams = Type.Object({ id: IdParams.properties.id, index: Type.String({ pattern: '^[0-9]{1,2}$', description: 'Position in the webhook list (0-based).' }) });
const MappingParams = Type.Object({ id: IdParams.properties.id, name: Type.String({ minLength: 1, maxLength: 200, description: "The mapping's name (URL-encoded)." }) });

const EnabledView = Type.Object({
  index: Type.Integer(),
  url: Type.String({ description: 'Scheme, host and path: no user info, query or token-like segment.' }),
  enabled: Type.Literal(true),
  wasDisabled: Type.Boolean({ description: 'false when the URL was on already (nothing changed: the route is idempotent).' }),
});

type Waited = HealthTotals['waited'];
const sumWaited = (all: Waited[]): Waited =>
  all.reduce((sum, w) => ({ throttledMs: sum.throttledMs + w.throttledMs, heldMs: sum.heldMs + w.heldMs, backpressuredMs: sum.backpressuredMs + w.backpressuredMs }), { throttledMs: 0, heldMs: 0, backpressuredMs: 0 });

/**
 * Webhook health: per URL of a destination, what the workers' attempts came to over the
 * last hour and day (counted in memory by each worker, added up in the store every
 * HEALTH_FLUSH_INTERVAL), and switching a URL that answered 410 Gone back on.
 */
export const destinationHealthRoutes: FastifyPluginAsyncTypebox<{ store: Store; deliveries: Pick<Deliveries, 'wakeHeld'>; clock?: () => number; operationalEvents?: OperationalEvents }> = async (
  app,
  { store, deliveries, clock = Date.now, operationalEvents },
) => {
  app.get('/destinations/:id/health', { schema: { params: IdParams, response: { 200: HealthView, ...errorReplies } } }, async (request) => {
    const destination = await store.destinations.get(request.params.id);
    if (!destination) throw notFound(`destination ${request.params.id}`);
    const now = clock();
    const byUrl = new Map<string, HealthBucket[]>();
    for (const bucket of await store.webhookHealth.read(destination.id, healthSinceMinute(now))) {
      if (!byUrl.has(bucket.url)) byUrl.set(bucket.url, []);
      byUrl.get(bucket.url)!.push(bucket);
    }
    const webhooks = destination.webhooks.map((webhook, index) => ({
      index,
      url: webhookLabel(webhook.url),
      ...(webhook.disabled && { disabled: webhook.disabled }),
      ...(webhook.backpressure && webhook.backpressure.untilMs > now && { backpressure: { until: new Date(webhook.backpressure.untilMs).toISOString(), reason: webhook.backpressure.reason } }),
      ...summarizeUrlHealth(byUrl.get(webhook.url) ?? [], now),
    }));
    // A mapping's URL is attempted, recorded and paused like a webhook's; shown beside them.
    const mappings =
      destination.type === 'actions'
        ? destination.mappings.map((mapping) => {
            const backpressure = mappingBackpressure(destination, mapping.name, now);
            return { name: mapping.name, url: webhookLabel(mapping.settings.url), ...(backpressure && { backpressure }), ...summarizeUrlHealth(byUrl.get(mapping.settings.url) ?? [], now) };
          })
        : undefined;
    const lanes = [...webhooks, ...(mappings ?? [])];
    return {
      destinationId: destination.id,
      at: new Date(now).toISOString(),
      stepMinutes: SERIES_STEP_MINUTES,
      flow: {
        paused: destination.paused,
        ...(destination.pausedAt && { pausedAt: destination.pausedAt }),
        maxRequestsPerSecond: destination.maxRequestsPerSecond,
        lastHour: sumWaited(lanes.map((w) => w.lastHour.waited)),
        lastDay: sumWaited(lanes.map((w) => w.lastDay.waited)),
      },
      webhooks,
      ...(mappings && { mappings }),
    };
  });

  /** The destination and its webhook the route's :id and :index name; 404 naming which is missing. */
  async function webhookOf(params: Static<typeof WebhookParams>) {
    const destination = await store.destinations.get(params.id);
    if (!destination) throw notFound(`destination ${params.id}`);
    const index = Number(params.index);
    const webhook = destination.webhooks[index];
    if (!webhook) throw notFound(`webhook ${index} of destination ${destination.id}`);
    return { destination, index, webhook };
  }

  // 200 whether or not the URL was off: an operator's second click (or a retried request) gets the
  // same answer, and `wasDisabled` says whether this one changed anything.
  app.post('/destinations/:id/webhooks/:index/enable', { schema: { params: WebhookParams, response: { 200: EnabledView, ...errorReplies } } }, async (request) => {
    const { destination, index, webhook } = await webhookOf(request.params);
    // Audited whether or not it was off: the operator asked for it.
    const wasDisabled = (await audited(store, request, async (tx) => ({ was: await tx.destinations.enableWebhook(destination.id, webhook.url) }), { target: destination.id, changed: [`webhooks[${index}].enabled`] })).was;
    // The switch back on ends the incident its switch-off began (named by when that was).
    if (wasDisabled && operationalEvents) {
      const event = { type: 'endpoint.enabled' as const, timestamp: new Date().toISOString(), data: { sourceId: destination.sourceId, destinationId: destination.id, webhookIndex: index } };
      await operationalEvents.raise(event, { since: webhook.disabled?.at }).catch((err: Error) => request.log.warn({ destinationId: destination.id, webhookIndex: index, err: err.message }, 'endpoint.enabled not raised'));
    }
    return { index, url: webhookLabel(webhook.url), enabled: true as const, wasDisabled };
  });

  // An operator ends a URL's backpressure (up to the retry window long) without waiting
  // it out. 204 whether or not it was paused (idempotent, like enable); the held deliveries are
  // woken either way, as on resume, so none sleeps on a pause that is gone.
  app.delete('/destinations/:id/webhooks/:index/backpressure', { schema: { params: WebhookParams, response: { 204: Type.Null(), ...errorReplies } } }, async (request, reply) => {
    const { destination, index, webhook } = await webhookOf(request.params);
    const cleared = (await audited(store, request, async (tx) => ({ was: await tx.flowControl.clearBackpressure(destination.id, webhook.url) }), { target: destination.id, changed: [`webhooks[${index}].backpressure`] })).was;
    request.log.info({ destinationId: destination.id, webhookIndex: index, cleared }, 'webhook backpressure cleared by an operator');
    wakeHeldDeliveries(deliveries, destination.id, 'flow-changed', request.log);
    return reply.code(204).send(null);
  });

  // The same clear for an actions destination's mapping URL: by mapping name, switched off or not, since its held deliveries wait on the URL all the same.
  app.delete('/destinations/:id/mappings/:name/backpressure', { schema: { params: MappingParams, response: { 204: Type.Null(), ...errorReplies } } }, async (request, reply) => {
    const destination = await store.destinations.get(request.params.id);
    if (!destination) throw notFound(`destination ${request.params.id}`);
    const { name } = request.params;
    const index = destination.type === 'actions' ? destination.mappings.findIndex((m) => m.name === name) : -1;
    const mapping = index >= 0 ? destination.mappings[index] : undefined;
    if (!mapping) throw notFound(`mapping ${JSON.stringify(name)} of destination ${destination.id}`);
    const cleared = (await audited(store, request, async (tx) => ({ was: await tx.flowControl.clearBackpressure(destination.id, mapping.settings.url) }), { target: destination.id, changed: [`mappings[${index}].backpressure`] })).was;
    request.log.info({ destinationId: destination.id, mapping: name, cleared }, 'mapping backpressure cleared by an operator');
    wakeHeldDeliveries(deliveries, destination.id, 'flow-changed', request.log);
    return reply.code(204).send(null);
  });
};
