import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { STOP_REASONS, type StopReason } from '../../delivery/stop-reasons';
import { inParallel } from '../../in-parallel';
import type { Keyring } from '../../privacy/keyring';
import { openForReader } from '../../privacy/open-sealed';
import { CALL_FATE, ERASED_BODY, UNREADABLE_BODY } from '../../privacy/sealed-body';
import { isSealedBody } from '../../privacy/sealed-body';
import { visibleId } from '../../privacy/visible-ids';
import type { Deliveries, DeliveryHistory } from '../../ports';
import type { FateSummary, MessageFate, MessageFateFilter, Store } from '../../store/types';
import { badRequest, payloadQuestion } from '../errors';
import { actorOf, recordPayloadRead } from '../access/audit-trail';
import { DestinationIdFilter, errorReplies, ErrorReply, SourceIdFilter } from './schemas';

const MAX_LIMIT = 100;
const DEFAULT_LIMIT = 50;
/** Deliveries' histories read at once for one page (one per message sent on). */
const HISTORY_READS = 8;

const FateStatus = Type.Unsafe<FateStatusName>({ type: 'string', enum: ['delivering', 'retrying', 'delivered', 'failed', 'stopped'] });
type FateStatusName = 'delivering' | 'retrying' | 'delivered' | 'failed' | 'stopped';

const FatesQuery = Type.Object(
  {
    sourceId: Type.Optional(SourceIdFilter),
    destinationId: Type.Optional(DestinationIdFilter),
    status: Type.Optional(Type.Unsafe<'sent' | 'stopped'>({ type: 'string', enum: ['sent', 'stopped'], description: '`sent`: a delivery was started; `stopped`: a rule stopped it at ingest.' })),
    reason: Type.Optional(Type.Unsafe<StopReason>({ type: 'string', enum: [...STOP_REASONS], description: `The rule that stopped it: ${STOP_REASONS.join(', ')}.` })),
    userId: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'Calls with this userId or anonymousId. Needs payloads:read: a match says what a body carries.' })),
    event: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Calls with this event (track) or name (page, screen). Needs payloads:read.' })),
    since: Type.Optional(Type.String({ format: 'date-time', description: 'Received at or after this time.' })),
    until: Type.Optional(Type.String({ format: 'date-time', description: 'Received before this time.' })),
    limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,4}$', description: `1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT}).` })),
    cursor: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]+$', maxLength: 1024, description: 'nextCursor of the previous page.' })),
  },
  { additionalProperties: false },
);

const Payload = (what: string) =>
  Type.Optional(Type.String({ description: `${what}, only to a token with payloads:read; \`"${ERASED_BODY}"\` once its user was erased.` }));

const FateView = Type.Object({
  messageId: Type.String(),
  sourceId: Type.String(),
  sourceName: Type.String(),
  destinationId: Type.String(),
  destinationName: Type.String({ description: 'The destination\'s name; its id once it was deleted.' }),
  type: Type.String(),
  receivedAt: Type.String({ format: 'date-time' }),
  decision: Type.String({ description: '`sent`, or the stop reason the one decision at ingest made for this destination.' }),
  status: FateStatus,
  reason: Type.Optional(Type.String({ description: 'Why it was stopped (the stop reason) or why its delivery failed or stopped (Temporal\'s words).' })),
  filterId: Type.Optional(Type.String({ description: 'The destination filter or transformation that stopped it.' })),
  userId: Payload('The call\'s userId'),
  anonymousId: Payload('The call\'s anonymousId'),
  event: Payload('The event (track) or name (page, screen)'),
});

const FateList = Type.Object({ fates: Type.Array(FateView), nextCursor: Type.Optional(Type.String({ description: 'Absent on the last page.' })) });

const security = [{ adminToken: [] }];

/** What one sent row's delivery says of its destination now (under way while Temporal has no word yet). */
function deliveryStatus(history: DeliveryHistory | undefined, destinationId: string): { status: FateStatusName; reason?: string } {
  const destination = history?.destinations.find((d) => d.destinationId === destinationId);
  if (destination?.status) return { status: destination.status, ...(destination.reason !== undefined && { reason: destination.reason }) };
  const running = history?.row.status;
  return { status: running === 'retrying' ? 'retrying' : 'delivering' };
}

/** The sealed ids and event name of a row, opened for payloads:read. */
async function openSummary(dataKeys: Store['dataKeys'], fate: MessageFate): Promise<FateSummary | undefined> {
  if (fate.summary === undefined) return undefined;
  if (!isSealedBody(fate.summary)) return fate.summary;
  const opened = await openForReader(dataKeys, fate.messageId, fate.summary, CALL_FATE);
  if (opened === ERASED_BODY || opened === UNREADABLE_BODY) return { userId: opened, event: opened };
  const { userId, anonymousId, event } = opened as FateSummary;
  return { ...(userId !== undefined && { userId }), ...(anonymousId !== undefined && { anonymousId }), ...(event !== undefined && { event }) };
}

/**
 * What happened to each call at each destination: the one decision made at ingest (sent, or the
 * stop and its reason), and for what was sent, what its delivery says now. A token with `read`
 * sees what happened; the call's ids and event name, and searching by them, need payloads:read.
 */
export const messageFateRoutes: FastifyPluginAsyncTypebox<{ store: Store; deliveries: Deliveries; keyring: Keyring | undefined }> = async (app, { store, deliveries, keyring }) => {
  app.get('/fates', { schema: { security, querystring: FatesQuery, response: { 200: FateList, ...errorReplies, 403: ErrorReply } } }, async (request) => {
    const { limit: limitText, status, reason, userId, event, cursor, ...rest } = request.query;
    const payloadsRead = actorOf(request).scopes.includes('payloads:read');
    if (userId !== undefined && !payloadsRead) throw payloadQuestion('userId', 'user id');
    if (event !== undefined && !payloadsRead) throw payloadQuestion('event', 'event name');
    const limit = limitText === undefined ? DEFAULT_LIMIT : Number(limitText);
    if (limit < 1 || limit > MAX_LIMIT) throw badRequest(`limit: must be from 1 to ${MAX_LIMIT}`);
    if (rest.since !== undefined && rest.until !== undefined && Date.parse(rest.since) >= Date.parse(rest.until)) throw badRequest('until: must be later than since');
    if (status === 'sent' && reason !== undefined) throw badRequest('reason: only a stopped call has a reason; leave status out or make it stopped');
    const filter: MessageFateFilter = {
      ...rest,
      ...((reason ?? status) !== undefined && { decision: reason ?? status }),
      // The same keyed hashes the rows were written with: the id as a userId and as an anonymousId.
      ...(userId !== undefined && { idHashes: [...new Set([visibleId(keyring, 'userId', userId), visibleId(keyring, 'anonymousId', userId)])] }),
      ...(event !== undefined && { eventHash: visibleId(keyring, 'eventName', event) }),
    };
    const found = await store.fates.list(filter, limit, cursor);
    if (found === 'invalid_cursor') throw badRequest('cursor: is not a nextCursor this API returned');
    const { fates } = found;

    const histories = new Map<string, DeliveryHistory | undefined>();
    const sent = [...new Set(fates.filter((f) => f.decision === 'sent').map((f) => `${f.sourceId}\0${f.messageId}`))];
    await inParallel(sent, HISTORY_READS, async (key) => {
      const [sourceId, messageId] = key.split('\0');
      histories.set(key, await deliveries.history(sourceId, messageId));
    });
    const sourceNames = new Map<string, string>();
    const destinationNames = new Map<string, string>();
    for (const id of new Set(fates.map((f) => f.sourceId))) sourceNames.set(id, (await store.sources.get(id))?.name ?? id);
    for (const id of new Set(fates.map((f) => f.destinationId))) destinationNames.set(id, (await store.destinations.get(id))?.name ?? id);

    const rows = await Promise.all(
      fates.map(async (fate) => {
        const now = fate.decision === 'sent' ? deliveryStatus(histories.get(`${fate.sourceId}\0${fate.messageId}`), fate.destinationId) : { status: 'stopped' as const, reason: fate.decision };
        const summary = payloadsRead ? await openSummary(store.dataKeys, fate) : undefined;
        return {
          messageId: fate.messageId,
          sourceId: fate.sourceId,
          sourceName: sourceNames.get(fate.sourceId)!,
          destinationId: fate.destinationId,
          destinationName: destinationNames.get(fate.destinationId)!,
          type: fate.type,
          receivedAt: fate.receivedAt,
          decision: fate.decision,
          ...now,
          ...(fate.filterId !== undefined && { filterId: fate.filterId }),
          ...summary,
        };
      }),
    );
    if (rows.some((row) => row.userId !== undefined || row.event !== undefined)) await recordPayloadRead(store.audit, request, 'payload.read', 'fates');
    return { fates: rows, ...(found.next && { nextCursor: found.next }) };
  });
};
