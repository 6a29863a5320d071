import { randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { OPERATIONAL_EVENT_TYPES, OPERATIONAL_FORMATS } from '../../delivery/operational-events';
import { savedUrlEgressRefusal, type Cidr } from '../../delivery/egress';
import { signingSecretRule } from '../../delivery/standard-webhooks';
import { webhookUrlRule } from '../../delivery/webhook-rules';
import type { OperationalEndpointSettings, Store } from '../../store/types';
import { actorOf, audited } from '../access/audit-trail';
import { webhookLabel } from '../../delivery/summary';
import { badRequest, notFound } from '../errors';
import { errorReplies, IdParams } from './schemas';

/** Bytes of key in a generated secret: Svix's size, within Standard Webhooks' 24–64. */
const GENERATED_KEY_BYTES = 32;

const EventTypes = Type.Array(Type.Union(OPERATIONAL_EVENT_TYPES.map((type) => Type.Literal(type))), {
  maxItems: OPERATIONAL_EVENT_TYPES.length,
  uniqueItems: true,
  description: `Svix's event names: ${OPERATIONAL_EVENT_TYPES.join(', ')}. Empty: every type.`,
});

const endpointFields = {
  url: Type.String({ minLength: 1, maxLength: 2048, description: 'Full http or https URL, without user:password@; reached through the same egress guard as webhooks (EGRESS_ALLOWLIST). Answered in full only to tokens with destinations:write; others read it with token-like path segments as `…` (a Slack incoming webhook\'s path is its credential).' }),
  eventTypes: EventTypes,
  format: Type.Union(OPERATIONAL_FORMATS.map((format) => Type.Literal(format)), { description: '"standard": the signed envelope {type, timestamp, data}; "slack": {text} for an incoming webhook.' }),
  enabled: Type.Boolean(),
};

const Secret = Type.String({ minLength: 1, maxLength: 200, description: 'Standard Webhooks secret (`whsec_` + base64 of 24-64 bytes). Write-only. Generated when absent and shown once, in the 201.' });

const EndpointBody = Type.Object(
  { url: endpointFields.url, eventTypes: endpointFields.eventTypes, secret: Type.Optional(Secret), format: Type.Optional(endpointFields.format), enabled: Type.Optional(endpointFields.enabled) },
  { additionalProperties: false },
);
const EndpointPatch = Type.Partial(Type.Object({ ...endpointFields, secret: Secret }), { additionalProperties: false });

const EndpointView = Type.Object({ id: Type.String(), ...endpointFields, createdAt: Type.String({ format: 'date-time' }), updatedAt: Type.String({ format: 'date-time' }) });
const CreatedView = Type.Object({ ...EndpointView.properties, secret: Type.Optional(Type.String({ description: 'The generated secret, shown this once; absent when the request gave one.' })) });

/**
 * The URL and secret rules, as a 400 naming the field and the rule (bad input is never a 500). The
 * URL also passes the egress rule webhooks are sent under, at save: an endpoint at the cloud metadata
 * service or on this machine is refused now, not found out at the first incident.
 */
function checked(settings: { url?: string; secret?: string }, egressAllowlist: Cidr[]): void {
  const urlRule = settings.url === undefined ? undefined : (webhookUrlRule(settings.url) ?? savedUrlEgressRefusal(settings.url, egressAllowlist));
  if (urlRule) throw badRequest(`url: ${urlRule}`);
  const secretRule = settings.secret === undefined ? undefined : signingSecretRule(settings.secret);
  if (secretRule) throw badRequest(`secret: ${secretRule}`);
}

const generatedSecret = () => `whsec_${randomBytes(GENERATED_KEY_BYTES).toString('base64')}`;

/**
 * Operational endpoints, where Switchyard sends its own events (Svix's names, signed with
 * Standard Webhooks). The secret is write-only: generated ones are answered once, in the 201; no
 * other answer, log line or audit row names it (the audit row lists `secret` as a changed field).
 */
export const operationalEndpointRoutes: FastifyPluginAsyncTypebox<{ store: Store; egressAllowlist: Cidr[] }> = async (app, { store, egressAllowlist }) => {
  /**
   * An endpoint as a token sees it: its URL can be a bearer credential (a Slack incoming webhook's
   * path is its secret), so a token that could not set it reads it as `webhookLabel` shows it,
   * token-like path segments as `…`, user info, query and fragment dropped.
   */
  const viewFor = <T extends { url: string }>(request: FastifyRequest, endpoint: T): T =>
    actorOf(request).scopes.includes('destinations:write') ? endpoint : { ...endpoint, url: webhookLabel(endpoint.url) };

  app.post('/operational-endpoints', { schema: { body: EndpointBody, response: { 201: CreatedView, ...errorReplies } } }, async (request, reply) => {
    const body = request.body;
    checked(body, egressAllowlist);
    const secret = body.secret ?? generatedSecret();
    const settings: OperationalEndpointSettings = { url: body.url, eventTypes: body.eventTypes, format: body.format ?? 'standard', enabled: body.enabled ?? true };
    const created = await audited(store, request, (tx) => tx.operationalEndpoints.create(settings, secret), { target: ({ id }) => id });
    return reply.code(201).send({ ...created, ...(body.secret === undefined && { secret }) });
  });

  app.get('/operational-endpoints', { schema: { response: { 200: Type.Object({ endpoints: Type.Array(EndpointView) }), ...errorReplies } } }, async (request) => ({
    endpoints: (await store.operationalEndpoints.list()).map((endpoint) => viewFor(request, endpoint)),
  }));

  app.get('/operational-endpoints/:id', { schema: { params: IdParams, response: { 200: EndpointView, ...errorReplies } } }, async (request) => {
    const endpoint = await store.operationalEndpoints.get(request.params.id);
    if (!endpoint) throw notFound(`operational endpoint ${request.params.id}`);
    return viewFor(request, endpoint);
  });

  app.patch('/operational-endpoints/:id', { schema: { params: IdParams, body: EndpointPatch, response: { 200: EndpointView, ...errorReplies } } }, async (request) => {
    const { secret, ...patch } = request.body;
    checked({ ...patch, ...(secret !== undefined && { secret }) }, egressAllowlist);
    const updated = await audited(store, request, (tx) => tx.operationalEndpoints.update(request.params.id, patch as Partial<OperationalEndpointSettings>, secret), { target: request.params.id });
    if (!updated) throw notFound(`operational endpoint ${request.params.id}`);
    return updated;
  });

  app.delete('/operational-endpoints/:id', { schema: { params: IdParams, response: { 204: Type.Null(), ...errorReplies } } }, async (request, reply) => {
    if (!(await audited(store, request, (tx) => tx.operationalEndpoints.delete(request.params.id), { target: request.params.id }))) throw notFound(`operational endpoint ${request.params.id}`);
    return reply.code(204).send(null);
  });
};
