import { v5 as uuidV5 } from 'uuid';
import type { Message } from '../delivery/payload';
import { correctTimestamp } from '../delivery/timestamps';
import type { Call } from './call';
import { callProblem, dateProblem, isPresent } from './call-rules';

/** A call made into a message, with its `integrations` object for the per-destination decision (rules/delivery-decision.ts). */
export interface AcceptedCall {
  message: Message;
  integrations?: Record<string, unknown>;
}

export type Acceptance = { problem: string } | { accepted: AcceptedCall[] };

const asId = (value: unknown) => (isPresent(value) ? String(value) : undefined);

/** Namespace of the messageIds Switchyard derives for calls sent without one (a fixed random UUID; changing it changes every id). */
export const CALL_NAMESPACE = 'c3a1f0d2-8b4e-4f6a-9d27-5e8b1c0a7f43';

/**
 * The messageId of a call that came without one, for its profile row and its delivery alike:
 * derived from its content, the client's own timestamp and its place in the request, so the same
 * request re-sent after a lost answer maps to the same messages (and Temporal finds their
 * workflows), while two equal calls in one batch stay two. Two equal calls sent alone with the same
 * timestamp count once, the lesser error. A call without a timestamp has only its arrival: it has
 * no identity that survives a retry. A UUID (version 5), as receivers written for Segment expect;
 * Segment's libraries always send one.
 */
export function contentMessageId({ type, fields }: Call, timestamp: string, position = 0): string {
  const content = [type, fields.userId, fields.anonymousId, fields.event, fields.name, fields.groupId, fields.previousId, timestamp, fields.properties ?? null, fields.traits ?? null, position];
  return uuidV5(JSON.stringify(content), CALL_NAMESPACE);
}

/**
 * The call's context, with the sender's address as `context.ip` when the call names none: Segment's
 * API does the same, and the seed's context carries the IP. A call that gives its own ip keeps it.
 */
export function contextWithIp(context: unknown, ip: string | undefined): Record<string, unknown> {
  const given = (context as Record<string, unknown> | undefined) ?? {};
  return ip && !isPresent(given.ip) ? { ...given, ip } : given;
}

/**
 * A valid call made ready for profiles and delivery alike: ids as strings, messageId filled,
 * timestamp corrected for the client's clock skew, receivedAt stamped, `context.ip` filled from `ip`.
 */
export function acceptCall(call: Call, receivedAtMs: number, batchSentAt?: string, newMessageId = (timestamp: string) => contentMessageId(call, timestamp), ip?: string): Message {
  const { type, fields } = call;
  const sentAt = (fields.sentAt as string | undefined) ?? batchSentAt;
  const clientTimestamp = (fields.timestamp ?? fields.originalTimestamp) as string | undefined;
  const timestamp = correctTimestamp(receivedAtMs, clientTimestamp, sentAt);
  return {
    type,
    // From the client's timestamp as sent (normalised), never from sentAt or the correction it
    // makes: Segment's libraries re-stamp sentAt on every retry. Without sentAt this is
    // the timestamp the ids were always derived from, so those ids stay what they were.
    messageId: asId(fields.messageId) ?? newMessageId(correctTimestamp(receivedAtMs, clientTimestamp)),
    userId: asId(fields.userId),
    anonymousId: asId(fields.anonymousId),
    timestamp,
    receivedAt: new Date(receivedAtMs).toISOString(),
    context: contextWithIp(fields.context, ip),
    properties: fields.properties as Record<string, unknown> | undefined,
    traits: fields.traits as Record<string, unknown> | undefined,
    event: fields.event as string | undefined,
    name: fields.name as string | undefined,
    category: fields.category as string | undefined,
    groupId: asId(fields.groupId),
    previousId: asId(fields.previousId),
    sent: sentFields(fields, sentAt, clientTimestamp),
  };
}

/** The fields the message above models itself, and so not kept in `sent`. */
const MODELLED = new Set(['type', 'messageId', 'userId', 'anonymousId', 'timestamp', 'receivedAt', 'context', 'properties', 'traits', 'event', 'name', 'category', 'groupId', 'previousId']);

/**
 * What Segment's pipeline keeps of a call beyond the modelled fields: every other root field as
 * sent, `sentAt` (a batch's for a call without its own), and `originalTimestamp`, the client's
 * timestamp before the skew correction (Segment's name for it).
 */
function sentFields(fields: Record<string, unknown>, sentAt: string | undefined, clientTimestamp: string | undefined): Record<string, unknown> {
  const sent: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(fields)) if (!MODELLED.has(name) && value !== undefined) sent[name] = value;
  if (sentAt !== undefined) sent.sentAt = sentAt;
  if (clientTimestamp !== undefined) sent.originalTimestamp = clientTimestamp;
  return sent;
}

/**
 * Every call of one request, all or nothing: the first broken rule (its field prefixed with the
 * call's place in a batch), or every call accepted. `receivedAtMs` is the request's arrival.
 */
export function acceptCalls(calls: Call[], options: { receivedAtMs: number; batchSentAt?: string; inBatch?: boolean; ip?: string }): Acceptance {
  const { receivedAtMs, batchSentAt, inBatch = false, ip } = options;
  const sentAtProblem = dateProblem('sentAt', batchSentAt);
  if (sentAtProblem) return { problem: sentAtProblem };
  for (const [i, call] of calls.entries()) {
    const problem = callProblem(call, inBatch ? `batch[${i}].` : '');
    if (problem) return { problem };
  }
  return {
    accepted: calls.map((call, i) => ({
      message: acceptCall(call, receivedAtMs, batchSentAt, (timestamp) => contentMessageId(call, timestamp, i), ip),
      integrations: call.fields.integrations as Record<string, unknown> | undefined,
    })),
  };
}
