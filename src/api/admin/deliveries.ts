import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { DeliveryPolicy } from '../../delivery/types';
import { destinationRulesReader } from '../../messages/destination-rules';
import { redeliveryPlanner } from '../../messages/redelivery-plan';
import { openForReader } from '../../privacy/open-sealed';
import { ERASED_BODY, FUNCTION_LOGS, UNREADABLE_BODY } from '../../privacy/sealed-body';
import type { Deliveries, DeliveryHistory, DeliveryStatusName } from '../../ports';
import type { Store } from '../../store/types';
import { ApiError, badRequest, notFound, payloadQuestion } from '../errors';
import { DestinationIdFilter, ErrorReply, errorReplies, IdParams, SourceIdFilter } from './schemas';
import { actorOf, recordChange, recordPayloadRead } from '../access/audit-trail';

const STATUSES: DeliveryStatusName[] = ['delivering', 'retrying', 'delivered', 'failed', 'stopped'];
const Status = Type.Unsafe<DeliveryStatusName>({ type: 'string', enum: STATUSES, description: 'delivering, retrying, delivered, failed or stopped.' });
const MessageTypeFilter = Type.Unsafe<'identify' | 'track' | 'page' | 'screen' | 'group' | 'alias' | 'delete'>({
  type: 'string',
  enum: ['identify', 'track', 'page', 'screen', 'group', 'alias', 'delete'],
});

const MAX_LIMIT = 500;
const DEFAULT_LIMIT = 50;

// Query strings arrive as text (the app's Ajv does not coerce types), so the limit is checked as digits.
const ListQuery = Type.Object(
  {
    sourceId: Type.Optional(SourceIdFilter),
    destinationId: Type.Optional(DestinationIdFilter),
    status: Type.Optional(Status),
    type: Type.Optional(MessageTypeFilter),
    // Searched by its keyed hash, so any id a call can carry is found; with
    // PAYLOAD_ENCRYPTION=off visibility holds plaintext, and an unquotable one is refused below.
    userId: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'Any userId; with PAYLOAD_ENCRYPTION=off, without double quotes, backslashes or control characters. Needs payloads:read.' })),
    since: Type.Optional(Type.String({ format: 'date-time', description: 'Deliveries started at or after this time.' })),
    until: Type.Optional(Type.String({ format: 'date-time', description: 'Deliveries started before this time.' })),
    limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,4}$', description: `1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT}).` })),
    cursor: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]+$', maxLength: 8192, description: 'nextCursor of the previous page: lists the deliveries started by the first page\'s moment.' })),
  },
  { additionalProperties: false },
);

const DeliveryRowView = Type.Object({
  messageId: Type.String(),
  sourceId: Type.String(),
  type: Type.String(),
  userId: Type.Optional(Type.String()),
  status: Status,
  startedAt: Type.String({ format: 'date-time' }),
  closedAt: Type.Optional(Type.String({ format: 'date-time' })),
  workflowId: Type.String(),
  runId: Type.String(),
});

const DeliveryList = Type.Object({
  deliveries: Type.Array(DeliveryRowView),
  nextCursor: Type.Optional(Type.String({ description: 'Absent on the last page.' })),
});

const Outcome = Type.Unsafe<'success' | 'retry' | 'permanent'>({ type: 'string', enum: ['success', 'retry', 'permanent'] });

const AttemptView = Type.Object({
  mapping: Type.Optional(Type.String({ description: 'An actions destination\'s mapping this attempt sent.' })),
  webhookIndex: Type.Integer(),
  url: Type.Optional(Type.String({ description: 'Scheme, host and path: no user info, query or token-like segment.' })),
  round: Type.Integer(),
  startedAt: Type.Optional(Type.String({ format: 'date-time' })),
  durationMs: Type.Optional(Type.Integer()),
  httpStatus: Type.Optional(Type.Integer()),
  error: Type.Optional(Type.String({ description: 'Why it failed; a function destination\'s is its disposition and the error\'s type (`function:rejected: InvalidEventPayload`; words: `function:retry`, `function:timeout`, `function:unsupported`, `function:rejected`, `function:error`, `function:dropped`), the message apart in `errorMessage`.' })),
  outcome: Outcome,
  logs: Type.Optional(
    Type.Union([Type.Array(Type.String()), Type.Literal(ERASED_BODY), Type.Literal(UNREADABLE_BODY)], {
      description: 'A function destination\'s console output of this attempt (4 KB at most, sensitive settings masked), only to a token with the payloads:read scope; sealed like the body, so erased with it.',
    }),
  ),
  errorMessage: Type.Optional(
    Type.String({ description: 'The message of the error a function destination\'s handler threw (sensitive settings masked), only to a token with the payloads:read scope: sealed like the body, as a function writes it from the event.' }),
  ),
});

const DeliveryDetail = Type.Object({
  ...DeliveryRowView.properties,
  userId: Type.Optional(Type.String({ description: 'With payloads:read, the userId of the opened body; without, its keyed hash as Temporal visibility holds it (the id itself with PAYLOAD_ENCRYPTION=off).' })),
  redelivery: Type.Optional(Type.Object({ requestedAt: Type.String({ format: 'date-time' }), previousRunId: Type.String() })),
  message: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Literal(ERASED_BODY), Type.Literal(UNREADABLE_BODY)], {
    description: `The body POSTed to each webhook, only to a token with the payloads:read scope (absent otherwise); \`"${ERASED_BODY}"\` once a DELETE regulation destroyed its user's data key (crypto-shredding); \`"${UNREADABLE_BODY}"\` if the sealed body in Temporal was altered.`,
  })),
  destinations: Type.Array(
    Type.Object({
      destinationId: Type.String(),
      status: Type.Optional(Type.Unsafe<'delivered' | 'failed' | 'stopped'>({ type: 'string', enum: ['delivered', 'failed', 'stopped'], description: 'Absent while under way.' })),
      reason: Type.Optional(Type.String()),
      attempts: Type.Array(AttemptView, { description: 'In the order they were made.' }),
    }),
  ),
});

const MessageParams = Type.Object({ sourceId: IdParams.properties.id, messageId: Type.String({ minLength: 1, maxLength: 200 }) });

/** The admin Bearer token (app.ts securitySchemes), shown on each route in the API document. */
const security = [{ adminToken: [] }];

const conflict = (message: string) => new ApiError(409, 'conflict', message);

const notRedelivered = (status: 'no_destinations' | 'stopped' | 'erased', messageId: string, sourceId: string) =>
  ({
    no_destinations: `none of the destinations of source ${sourceId} that message ${messageId} went to is enabled now`,
    stopped: `today's consent, suppression or destination filters deliver message ${messageId} to none of the destinations it went to`,
    erased: `message ${messageId} can no longer be read: its user was erased`,
  })[status];

/**
 * A delivery's detail. With payloads:read: the opened body and the plaintext userId in it. Without
 * it: no body, and the userId as visibility holds it (its keyed hash), as every other
 * metadata answer names users; the body is not opened at all.
 */
async function detailView(dataKeys: Store['dataKeys'], found: DeliveryHistory, payloadsRead: boolean) {
  const { input, row, visibleUserId } = found;
  const destinations = await attemptsView(dataKeys, input.messageId, found.destinations, payloadsRead);
  if (!payloadsRead) {
    const { userId: _known, ...metadata } = row;
    return { ...metadata, ...(visibleUserId !== undefined && { userId: visibleUserId }), ...(input.redelivery && { redelivery: input.redelivery }), destinations };
  }
  const message = input.sealedMessage ? await openForReader(dataKeys, input.messageId, input.sealedMessage) : (input.message ?? {});
  // A sealed input names no user: the row shows the userId of the opened body, none once erased.
  const opened = typeof message === 'string' ? undefined : (message as Record<string, unknown>).userId;
  const userId = typeof opened === 'string' ? opened : row.userId;
  return { ...row, ...(userId !== undefined && { userId }), ...(input.redelivery && { redelivery: input.redelivery }), message, destinations };
}

/**
 * The attempts as answered: a function destination's console output opened for a reader with
 * payloads:read (`[erased]` once its user's key is gone), and left out for every other reader.
 */
async function attemptsView(dataKeys: Store['dataKeys'], messageId: string, destinations: DeliveryHistory['destinations'], payloadsRead: boolean) {
  return Promise.all(
    destinations.map(async (destination) => ({
      ...destination,
      attempts: await Promise.all(
        destination.attempts.map(async ({ logs, errorMessage, sealedLogs, ...attempt }) => {
          if (!payloadsRead) return attempt;
          if (!sealedLogs) return { ...attempt, ...(logs && { logs }), ...(errorMessage !== undefined && { errorMessage }) };
          const opened = await openForReader(dataKeys, messageId, sealedLogs, FUNCTION_LOGS);
          if (typeof opened === 'string') return { ...attempt, logs: opened };
          const output = opened as unknown as { logs?: string[]; errorMessage?: string };
          return { ...attempt, ...(output.logs && { logs: output.logs }), ...(output.errorMessage !== undefined && { errorMessage: output.errorMessage }) };
        }),
      ),
    })),
  );
}

/** Deliveries: find any, read its attempts, send it again. Read from Temporal through the Deliveries port. */
export const deliveryRoutes: FastifyPluginAsyncTypebox<{ store: Store; deliveries: Deliveries; policy: DeliveryPolicy }> = async (app, { store, deliveries, policy }) => {
  const planRedelivery = redeliveryPlanner(store, policy, destinationRulesReader(store.destinationFilters, (message, filterId) => app.log.warn({ filterId }, message), store.transformations));

  app.get(
    '/deliveries',
    { schema: { security, querystring: ListQuery, response: { 200: DeliveryList, ...errorReplies, 403: ErrorReply } } },
    async (request) => {
      const { limit: limitText, since, until, ...filter } = request.query;
      // Whether any delivery matches a user id says what bodies carried: a payload question.
      if (filter.userId !== undefined && !actorOf(request).scopes.includes('payloads:read')) throw payloadQuestion('userId', 'user id');
      const limit = limitText === undefined ? DEFAULT_LIMIT : Number(limitText);
      if (limit < 1 || limit > MAX_LIMIT) throw badRequest(`limit: must be from 1 to ${MAX_LIMIT}`);
      if (since !== undefined && until !== undefined && Date.parse(since) >= Date.parse(until)) throw badRequest('until: must be later than since');
      const page = await deliveries.list({ ...filter, ...(since && { since }), ...(until && { until }), limit });
      if (page === 'invalid_cursor') throw badRequest('cursor: is not a nextCursor this API returned for these filters');
      if (page === 'unsearchable_user_id') throw badRequest('userId: with PAYLOAD_ENCRYPTION=off, a userId with a double quote, a backslash or a control character cannot be searched');
      return page;
    },
  );

  app.get(
    '/sources/:sourceId/deliveries/:messageId',
    { schema: { security, params: MessageParams, response: { 200: DeliveryDetail, ...errorReplies } } },
    async (request) => {
      const { sourceId, messageId } = request.params;
      const found = await deliveries.history(sourceId, messageId);
      if (!found) throw notFound(`delivery of message ${messageId} from source ${sourceId}`);
      // Event bodies are their own right; `read` sees what happened to a delivery, not what it carried.
      const payloadsRead = actorOf(request).scopes.includes('payloads:read');
      const detail = await detailView(store.dataKeys, found, payloadsRead);
      if ('message' in detail && detail.message !== undefined) await recordPayloadRead(store.audit, request, 'payload.read', `${sourceId}/${messageId}`);
      return detail;
    },
  );

  app.post(
    '/sources/:sourceId/deliveries/:messageId/redeliver',
    {
      schema: {
        security,
        params: MessageParams,
        response: { 202: Type.Object({ messageId: Type.String(), workflowId: Type.String(), runId: Type.String() }), ...errorReplies, 409: ErrorReply },
      },
    },
    async (request, reply) => {
      const { sourceId, messageId } = request.params;
      const found = await deliveries.history(sourceId, messageId);
      if (!found) throw notFound(`delivery of message ${messageId} from source ${sourceId}`);
      if (found.row.closedAt === undefined) throw conflict(`the delivery of message ${messageId} is still under way; redeliver it once it has ended`);
      const { input } = found;
      // The bodies as first sent, to the destinations it went to, through today's rules.
      const plan = await planRedelivery(sourceId, input);
      if (plan.status !== 'planned') throw conflict(notRedelivered(plan.status, messageId, sourceId));
      const started = await deliveries.redeliver({ ...plan.input, redelivery: { requestedAt: new Date().toISOString(), previousRunId: found.row.runId } });
      if (started === 'running') throw conflict(`the delivery of message ${messageId} is still under way; redeliver it once it has ended`);
      await recordChange(store, request, `${sourceId}/${messageId}`);
      return reply.code(202).send({ messageId, ...started });
    },
  );
};
