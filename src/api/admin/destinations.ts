import { Type, type Static } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { parseDuration } from '../../delivery/duration';
import { MAX_CONSENT_CATEGORIES, MAX_CONSENT_CATEGORY_LENGTH } from '../../rules/consent';
import { signingSecretRule } from '../../delivery/standard-webhooks';
import type { Deliveries } from '../../ports';
import type { ConsentSettings, Destination, DestinationPatch, Store, WebhookSetting } from '../../store/types';
import { badRequest, notFound } from '../errors';
import { audited } from '../access/audit-trail';
import type { SigningOverlapEnds } from '../signing-overlaps';
import { seedLimitMessages } from './schema-errors';
import { readTerraformSettings } from './terraform-settings';
import { readSegmentDestinationBody, segmentChangesOf } from './segment-destination-body';
import { ErrorReply, errorReplies, IdParams } from './schemas';
import { wakeHeldDeliveries } from './wake-held';
import { findWebhookViolation, MAX_HEADERS, MAX_WEBHOOKS, violationMessage, type WebhookInput } from '../../delivery/webhook-rules';
import { AuthBody, AuthView, DestinationTypeSchema, MappingList, MappingView, TlsBody } from './actions-schemas';
import { acceptedActionsSettings, actionsView } from './actions-settings';
import { acceptedFunctionDestination, functionView, patchedFunctionSettings } from './function-destinations';

const WebhookBody = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048, description: 'Full http or https URL, without user:password@.' }),
    headers: Type.Optional(
      Type.Record(Type.String(), Type.String({ maxLength: 4096 }), {
        maxProperties: MAX_HEADERS,
        description: 'Static headers added to every request to this URL. Values are write-only.',
      }),
    ),
    enabled: Type.Optional(
      Type.Boolean({
        description: 'true switches a URL back on after a 410 Gone (or after false); false switches it off. Absent keeps its state.',
      }),
    ),
  },
  { additionalProperties: false },
);

const Name = Type.String({ minLength: 1, maxLength: 200 });
const Enabled = Type.Boolean({ description: 'The on/off switch: only enabled destinations receive events.' });
const SharedSecret = Type.Union([Type.String({ maxLength: 1024 }), Type.Null()], {
  description: 'When set, every request carries X-Signature. Write-only; null or "" clears it.',
});
const SigningSecret = Type.Union([Type.String({ maxLength: 200 }), Type.Null()], {
  description:
    'Standard Webhooks secret (`whsec_` + base64 of 24-64 random bytes). When set, every request also carries webhook-id, webhook-timestamp and webhook-signature. Write-only; null or "" switches it off. Setting a new one rotates: the previous secret keeps signing (both signatures are sent) for the overlap.',
});
const SigningSecretOverlap = Type.String({
  maxLength: 20,
  description: 'On rotation, how long the previous signing secret keeps signing, e.g. `1h` (default SIGNING_SECRET_OVERLAP).',
});
/** The largest rate a destination may be limited to: beyond it the limit would be the workers' pace anyway. */
export const MAX_REQUESTS_PER_SECOND_LIMIT = 10_000;
const MaxRequestsPerSecond = Type.Union([Type.Integer({ minimum: 1, maximum: MAX_REQUESTS_PER_SECOND_LIMIT }), Type.Null()], {
  description: `Requests per second to all of this destination's URLs together, first attempts and retries alike, across every worker (1 to ${MAX_REQUESTS_PER_SECOND_LIMIT}); messages over it wait their turn, uncounted. null: no limit.`,
});
const Paused = Type.Boolean({
  description: 'true holds every new and retrying delivery without sending (unlike enabled: false, which drops them); false sends what was held. Held time does not count against the retry window, up to DELIVERY_MAX_HOLD.',
});
/** Whether requests carry the W3C trace context. */
const PropagateTraceContext = Type.Boolean({
  description:
    'Whether each request carries the message\'s W3C trace context while tracing is on: `traceparent` (the message\'s trace id and the attempt\'s own span id) and, only beside it, the sender\'s `tracestate`; never `baggage`. false sends neither (the attempts\' spans are still exported). Default true.',
});
/** Segment Consent Management's limits on a destination's categories. */
const CategoryId = Type.String({ minLength: 1, maxLength: MAX_CONSENT_CATEGORY_LENGTH, description: 'A consent category id, as the consent manager names it in `context.consent.categoryPreferences` (1 to 100 characters).' });
const WhenAbsent = Type.Unsafe<ConsentSettings['whenAbsent']>({
  type: 'string',
  enum: ['deliver', 'drop'],
  description: 'An event without `context.consent.categoryPreferences`: `deliver` (Segment\'s default) or `drop` (fail closed).',
});
const ConsentBody = Type.Object(
  {
    categories: Type.Optional(Type.Array(CategoryId, { maxItems: MAX_CONSENT_CATEGORIES, description: `Every one of these must be granted (true) in an event's categoryPreferences for the event to reach this destination; none: every event does. Up to ${MAX_CONSENT_CATEGORIES}.` })),
    whenAbsent: Type.Optional(WhenAbsent),
  },
  { additionalProperties: false, description: 'Consent settings (Segment Consent Management). On create, absent fields take the defaults (no categories, deliver); on PATCH they keep their value.' },
);
const ConsentView = Type.Object(
  { categories: Type.Array(Type.String()), whenAbsent: WhenAbsent },
  { description: 'Which consent categories an event must grant to reach this destination, and what happens to an event without preferences.' },
);

const FunctionId = Type.String({ minLength: 1, maxLength: 100, description: 'A `function` destination\'s DESTINATION function (`dfn_…`); it runs the version deployed when each delivery starts. Fixed at creation.' });
const FunctionSettings = (description: string) => Type.Record(Type.String({ maxLength: 200 }), Type.Unknown(), { maxProperties: 100, description });

const webhookList = (description: string) => Type.Array(WebhookBody, { maxItems: MAX_WEBHOOKS, description });
const WEBHOOKS_DOC = 'Tried in order for each message until one accepts it.';

const CreateDestinationBody = Type.Object(
  {
    name: Type.Optional(Name),
    enabled: Enabled,
    sharedSecret: Type.Optional(SharedSecret),
    signingSecret: Type.Optional(SigningSecret),
    maxRequestsPerSecond: Type.Optional(MaxRequestsPerSecond),
    paused: Type.Optional(Paused),
    propagateTraceContext: Type.Optional(PropagateTraceContext),
    consent: Type.Optional(ConsentBody),
    type: Type.Optional(DestinationTypeSchema),
    functionId: Type.Optional(FunctionId),
    settings: Type.Optional(FunctionSettings('A `function` destination\'s settings, as its function defines them (name → value); every required one must be given.')),
    webhooks: Type.Optional(webhookList(`${WEBHOOKS_DOC} Required for a \`webhooks\` destination; absent for \`actions\` and \`function\`.`)),
    mappings: Type.Optional(MappingList('Required for an `actions` destination: 1 to 5 mappings.')),
    auth: Type.Optional(AuthBody),
    tls: Type.Optional(TlsBody),
  },
  { additionalProperties: false },
);

const PatchDestinationBody = Type.Object(
  {
    name: Type.Optional(Name),
    enabled: Type.Optional(Enabled),
    sharedSecret: Type.Optional(SharedSecret),
    signingSecret: Type.Optional(SigningSecret),
    signingSecretOverlap: Type.Optional(SigningSecretOverlap),
    maxRequestsPerSecond: Type.Optional(MaxRequestsPerSecond),
    paused: Type.Optional(Paused),
    propagateTraceContext: Type.Optional(PropagateTraceContext),
    consent: Type.Optional(ConsentBody),
    settings: Type.Optional(FunctionSettings('A `function` destination\'s settings; replace the whole set. A sensitive value sent back masked, as answers show it, keeps its value.')),
    webhooks: Type.Optional(webhookList(`${WEBHOOKS_DOC} Replaces the whole list, headers included.`)),
    mappings: Type.Optional(MappingList('An `actions` destination\'s mappings; replaces the whole list.')),
    auth: Type.Optional(AuthBody),
    tls: Type.Optional(TlsBody),
  },
  { additionalProperties: false },
);

/** What the API shows of a destination: whether a secret is set and which headers, never their values. */
const DestinationView = Type.Object({
  id: Type.String(),
  sourceId: Type.String(),
  name: Type.String(),
  enabled: Type.Boolean(),
  sharedSecretSet: Type.Boolean(),
  signingSecretSet: Type.Boolean({ description: 'Whether requests carry Standard Webhooks signatures.' }),
  previousSigningSecretUntil: Type.Optional(
    Type.String({ format: 'date-time', description: 'During a rotation overlap: until when the previous secret also signs.' }),
  ),
  webhooks: Type.Array(
    Type.Object({
      url: Type.String(),
      headerNames: Type.Array(Type.String()),
      disabled: Type.Optional(
        Type.Object(
          { reason: Type.String(), at: Type.String({ format: 'date-time' }) },
          { description: 'Present while the URL is switched off (it answered 410 Gone, or an operator switched it off): nothing is sent to it.' },
        ),
      ),
      backpressure: Type.Optional(
        Type.Object(
          { until: Type.String({ format: 'date-time' }), reason: Type.String() },
          { description: 'Present while the URL is paused for every message because it answered 429 or 503 with Retry-After.' },
        ),
      ),
    }),
  ),
  maxRequestsPerSecond: Type.Union([Type.Integer(), Type.Null()], { description: 'The destination\'s rate limit; null: none.' }),
  paused: Type.Boolean({ description: 'Whether deliveries are held (see PATCH paused).' }),
  pausedAt: Type.Optional(Type.String({ format: 'date-time', description: 'While paused: since when.' })),
  propagateTraceContext: PropagateTraceContext,
  consent: ConsentView,
  type: Type.String({ description: '`webhooks` or `actions`.' }),
  mappings: Type.Optional(Type.Array(MappingView, { description: 'An actions destination\'s mappings, header values masked.' })),
  auth: Type.Optional(AuthView),
  tlsSet: Type.Boolean({ description: 'Whether requests use a client certificate (mutual TLS).' }),
  functionId: Type.Optional(Type.String({ description: 'A `function` destination\'s function.' })),
  settings: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'A `function` destination\'s settings, each `sensitive` one masked (`••••••••••abcd`).' })),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});

const SourceIdParams = Type.Object({ sourceId: IdParams.properties.id });

function toDestinationView(destination: Destination, nowMs = Date.now()): Static<typeof DestinationView> {
  return {
    id: destination.id,
    sourceId: destination.sourceId,
    name: destination.name,
    enabled: destination.enabled,
    sharedSecretSet: destination.sharedSecret !== null,
    signingSecretSet: destination.signing !== null,
    ...(destination.signing?.previous && Date.parse(destination.signing.previous.until) > Date.now() && { previousSigningSecretUntil: destination.signing.previous.until }),
    webhooks: destination.webhooks.map(({ url, headers, disabled, backpressure }) => ({
      url,
      headerNames: Object.keys(headers),
      ...(disabled && { disabled }),
      ...(backpressure && backpressure.untilMs > nowMs && { backpressure: { until: new Date(backpressure.untilMs).toISOString(), reason: backpressure.reason } }),
    })),
    maxRequestsPerSecond: destination.maxRequestsPerSecond,
    paused: destination.paused,
    ...(destination.pausedAt && { pausedAt: destination.pausedAt }),
    propagateTraceContext: destination.propagateTraceContext,
    consent: destination.consent,
    ...actionsView(destination, nowMs),
    createdAt: destination.createdAt,
    updatedAt: destination.updatedAt,
  };
}

/** Applies the seed rules the schema cannot express, and fills in the optional headers. */
function acceptedWebhooks(webhooks: (WebhookInput & { enabled?: boolean })[]): WebhookSetting[] {
  const violation = findWebhookViolation(webhooks);
  if (violation) throw badRequest(violationMessage(violation));
  return webhooks.map(({ url, headers, enabled }) => ({ url, headers: headers ?? {}, ...(enabled !== undefined && { enabled }) }));
}

/** The value itself is never echoed: error replies end up in logs. */
function acceptedSigningSecret(secret: string | null | undefined): void {
  const rule = secret ? signingSecretRule(secret) : undefined;
  if (rule) throw badRequest(`signingSecret: ${rule}`);
}

function overlapMs(overlap: string | undefined, defaultMs: number): number {
  if (overlap === undefined) return defaultMs;
  try {
    return parseDuration(overlap);
  } catch (err) {
    throw badRequest(`signingSecretOverlap: ${(err as Error).message}`);
  }
}

/** Destinations: where a source's events are POSTed (the seed's Webhooks destination settings). */
export const destinationRoutes: FastifyPluginAsyncTypebox<{ store: Store; deliveries: Pick<Deliveries, 'wakeHeld'>; signingSecretOverlapMs: number; signingOverlaps?: SigningOverlapEnds }> = async (
  app,
  { store, deliveries, signingSecretOverlapMs, signingOverlaps },
) => {
  app.setSchemaErrorFormatter(seedLimitMessages);
  /** A destination as answered: a function destination's settings with every sensitive value masked. */
  const view = async (destination: Destination) => ({ ...toDestinationView(destination), ...(await functionView(store, destination)) });

  app.post(
    '/sources/:sourceId/destinations',
    {
      preValidation: [readSegmentDestinationBody(store.functions), readTerraformSettings],
      schema: {
        params: SourceIdParams,
        body: CreateDestinationBody,
        response: {
          201: Type.Composite([DestinationView, Type.Object({ segmentChanges: Type.Optional(Type.Array(Type.String(), { description: "Given in Segment's shape: what Switchyard does differently from Segment, each named." })) })]),
          422: ErrorReply,
          ...errorReplies,
        },
      },
    },
    async (request, reply) => {
      const { sourceId } = request.params;
      if (!(await store.sources.get(sourceId))) throw notFound(`source ${sourceId}`);
      const actions = acceptedActionsSettings(request.body, undefined);
      const webhooks = acceptedWebhooks(request.body.webhooks ?? []);
      acceptedSigningSecret(request.body.signingSecret);
      const fn = await acceptedFunctionDestination(store, request.body);
      const { mappings: _given, auth: _auth, tls: _tls, functionId: _fn, settings: _settings, ...settings } = request.body;
      const destination = await audited(store, request, (tx) => tx.destinations.create(sourceId, { ...settings, webhooks, ...actions, ...(fn && { function: fn }) }), { target: ({ id }) => id });
      const segmentChanges = segmentChangesOf(request);
      return reply.code(201).send({ ...(await view(destination)), ...(segmentChanges && { segmentChanges }) });
    },
  );

  app.get(
    '/sources/:sourceId/destinations',
    {
      schema: {
        params: SourceIdParams,
        response: { 200: Type.Object({ destinations: Type.Array(DestinationView) }), ...errorReplies },
      },
    },
    async (request) => {
      const { sourceId } = request.params;
      if (!(await store.sources.get(sourceId))) throw notFound(`source ${sourceId}`);
      return { destinations: await Promise.all((await store.destinations.listBySource(sourceId)).map(view)) };
    },
  );

  app.get('/destinations/:id', { schema: { params: IdParams, response: { 200: DestinationView, ...errorReplies } } }, async (request) => {
    const destination = await store.destinations.get(request.params.id);
    if (!destination) throw notFound(`destination ${request.params.id}`);
    return view(destination);
  });

  app.patch(
    '/destinations/:id',
    { preValidation: readTerraformSettings, schema: { params: IdParams, body: PatchDestinationBody, response: { 200: DestinationView, ...errorReplies } } },
    async (request) => {
      const { webhooks, signingSecretOverlap, mappings, auth, tls, settings, ...rest } = request.body;
      acceptedSigningSecret(rest.signingSecret);
      const patch: DestinationPatch = { ...rest, signingSecretOverlapMs: overlapMs(signingSecretOverlap, signingSecretOverlapMs) };
      if (webhooks !== undefined) patch.webhooks = acceptedWebhooks(webhooks);
      const actionsChange = mappings !== undefined || auth !== undefined || tls !== undefined || webhooks !== undefined;
      const before = patch.paused === false || patch.maxRequestsPerSecond !== undefined || actionsChange || settings !== undefined ? await store.destinations.get(request.params.id) : undefined;
      if (actionsChange && before) Object.assign(patch, acceptedActionsSettings({ webhooks, mappings, auth, tls }, before));
      const fn = await patchedFunctionSettings(store, before, settings);
      if (fn) patch.function = fn;
      const destination = await audited(store, request, (tx) => tx.destinations.update(request.params.id, patch), { target: request.params.id });
      if (!destination) throw notFound(`destination ${request.params.id}`);
      if (destination.signing?.previous) signingOverlaps?.endsAt(Date.parse(destination.signing.previous.until));
      // Resumed, or a new rate limit (the store has restarted its queue): held deliveries ask again now.
      if (before?.paused === true && !destination.paused) wakeHeldDeliveries(deliveries, destination.id, 'resumed', request.log);
      else if (before && before.maxRequestsPerSecond !== destination.maxRequestsPerSecond) wakeHeldDeliveries(deliveries, destination.id, 'flow-changed', request.log);
      return view(destination);
    },
  );

  app.delete(
    '/destinations/:id',
    { schema: { params: IdParams, response: { 204: Type.Null(), ...errorReplies } } },
    async (request, reply) => {
      if (!(await audited(store, request, (tx) => tx.destinations.delete(request.params.id), { target: request.params.id }))) throw notFound(`destination ${request.params.id}`);
      return reply.code(204).send(null);
    },
  );
};
