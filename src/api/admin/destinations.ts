import { Type, type Static } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Destination, Store, Webhook } from '../../store/types';
import { badRequest, notFound } from '../errors';
import { seedLimitMessages } from './schema-errors';
import { errorReplies, IdParams } from './schemas';
import { findWebhookViolation, MAX_HEADERS, MAX_WEBHOOKS, violationMessage, type WebhookInput } from './webhook-rules';

const WebhookBody = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048, description: 'Full http or https URL, without user:password@.' }),
    headers: Type.Optional(
      Type.Record(Type.String(), Type.String({ maxLength: 4096 }), {
        maxProperties: MAX_HEADERS,
        description: 'Static headers added to every request to this URL. Values are write-only.',
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
const webhookList = (description: string) => Type.Array(WebhookBody, { maxItems: MAX_WEBHOOKS, description });
const WEBHOOKS_DOC = 'Tried in order for each message until one accepts it.';

const CreateDestinationBody = Type.Object(
  { name: Type.Optional(Name), enabled: Enabled, sharedSecret: Type.Optional(SharedSecret), webhooks: webhookList(WEBHOOKS_DOC) },
  { additionalProperties: false },
);

const PatchDestinationBody = Type.Object(
  {
    name: Type.Optional(Name),
    enabled: Type.Optional(Enabled),
    sharedSecret: Type.Optional(SharedSecret),
    webhooks: Type.Optional(webhookList(`${WEBHOOKS_DOC} Replaces the whole list, headers included.`)),
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
  webhooks: Type.Array(Type.Object({ url: Type.String(), headerNames: Type.Array(Type.String()) })),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});

const SourceIdParams = Type.Object({ sourceId: IdParams.properties.id });

function toDestinationView(destination: Destination): Static<typeof DestinationView> {
  return {
    id: destination.id,
    sourceId: destination.sourceId,
    name: destination.name,
    enabled: destination.enabled,
    sharedSecretSet: destination.sharedSecret !== null,
    webhooks: destination.webhooks.map(({ url, headers }) => ({ url, headerNames: Object.keys(headers) })),
    createdAt: destination.createdAt,
    updatedAt: destination.updatedAt,
  };
}

/** Applies the seed rules the schema cannot express, and fills in the optional headers. */
function acceptedWebhooks(webhooks: WebhookInput[]): Webhook[] {
  const violation = findWebhookViolation(webhooks);
  if (violation) throw badRequest(violationMessage(violation));
  return webhooks.map(({ url, headers }) => ({ url, headers: headers ?? {} }));
}

/** Destinations: where a source's events are POSTed (the seed's Webhooks destination settings). */
export const destinationRoutes: FastifyPluginAsyncTypebox<{ store: Store }> = async (app, { store }) => {
  app.setSchemaErrorFormatter(seedLimitMessages);

  app.post(
    '/sources/:sourceId/destinations',
    { schema: { params: SourceIdParams, body: CreateDestinationBody, response: { 201: DestinationView, ...errorReplies } } },
    async (request, reply) => {
      const { sourceId } = request.params;
      if (!(await store.sources.get(sourceId))) throw notFound(`source ${sourceId}`);
      const webhooks = acceptedWebhooks(request.body.webhooks);
      const destination = await store.destinations.create(sourceId, { ...request.body, webhooks });
      return reply.code(201).send(toDestinationView(destination));
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
      return { destinations: (await store.destinations.listBySource(sourceId)).map(toDestinationView) };
    },
  );

  app.get('/destinations/:id', { schema: { params: IdParams, response: { 200: DestinationView, ...errorReplies } } }, async (request) => {
    const destination = await store.destinations.get(request.params.id);
    if (!destination) throw notFound(`destination ${request.params.id}`);
    return toDestinationView(destination);
  });

  app.patch(
    '/destinations/:id',
    { schema: { params: IdParams, body: PatchDestinationBody, response: { 200: DestinationView, ...errorReplies } } },
    async (request) => {
      const { webhooks, ...rest } = request.body;
      const patch = webhooks === undefined ? rest : { ...rest, webhooks: acceptedWebhooks(webhooks) };
      const destination = await store.destinations.update(request.params.id, patch);
      if (!destination) throw notFound(`destination ${request.params.id}`);
      return toDestinationView(destination);
    },
  );

  app.delete(
    '/destinations/:id',
    { schema: { params: IdParams, response: { 204: Type.Null(), ...errorReplies } } },
    async (request, reply) => {
      if (!(await store.destinations.delete(request.params.id))) throw notFound(`destination ${request.params.id}`);
      return reply.code(204).send(null);
    },
  );
};
