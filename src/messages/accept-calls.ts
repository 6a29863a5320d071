import { createHash } from 'node:crypto';
import { isIntegrationEnabled } from '../delivery/integrations';
import type { Message } from '../delivery/payload';
import { correctTimestamp } from '../delivery/timestamps';
import type { Call } from './call';
import { callProblem, isPresent } from './call-rules';

/** A call made into a message; `deliverable` is false when its `integrations` switch this destination off. */
export interface AcceptedCall {
  message: Message;
  deliverable: boolean;
}

export type Acceptance = { problem: string } | { accepted: AcceptedCall[] };

const asId = (value: unknown) => (isPresent(value) ? String(value) : undefined);

/**
 * The messageId of a call that came without one: derived from its content and its place in the
 * request, so the same request re-sent after a lost answer maps to the same messages (and Temporal
 * finds their workflows), while two equal calls in one batch stay two. Two equal calls sent alone
 * in the same millisecond count once, which is the lesser error. Segment's libraries always send one.
 */
export function contentMessageId({ type, fields }: Call, timestamp: string, position = 0): string {
  const content = [type, fields.userId, fields.anonymousId, fields.event, fields.name, fields.groupId, fields.previousId, timestamp, fields.properties ?? null, fields.traits ?? null, position];
  return `sha1:${createHash('sha1').update(JSON.stringify(content)).digest('hex')}`;
}

/**
 * A valid call made ready for profiles and delivery alike: ids as strings, messageId filled,
 * timestamp corrected for the client's clock skew, receivedAt stamped.
 */
export function acceptCall(call: Call, receivedAtMs: number, batchSentAt?: string, newMessageId = (timestamp: string) => contentMessageId(call, timestamp)): Message {
  const { type, fields } = call;
  const sentAt = (fields.sentAt as string | undefined) ?? batchSentAt;
  const timestamp = correctTimestamp(receivedAtMs, (fields.timestamp ?? fields.originalTimestamp) as string | undefined, sentAt);
  return {
    type,
    messageId: asId(fields.messageId) ?? newMessageId(timestamp),
    userId: asId(fields.userId),
    anonymousId: asId(fields.anonymousId),
    timestamp,
    receivedAt: new Date(receivedAtMs).toISOString(),
    context: (fields.context as Record<string, unknown> | undefined) ?? {},
    properties: fields.properties as Record<string, unknown> | undefined,
    traits: fields.traits as Record<string, unknown> | undefined,
    event: fields.event as string | undefined,
    name: fields.name as string | undefined,
    category: fields.category as string | undefined,
    groupId: asId(fields.groupId),
    previousId: asId(fields.previousId),
  };
}

/**
 * Every call of one request, all or nothing: the first broken rule (its field prefixed with the
 * call's place in a batch), or every call accepted. `receivedAtMs` is the request's arrival.
 */
export function acceptCalls(calls: Call[], options: { receivedAtMs: number; batchSentAt?: string; inBatch?: boolean }): Acceptance {
  const { receivedAtMs, batchSentAt, inBatch = false } = options;
  for (const [i, call] of calls.entries()) {
    const problem = callProblem(call, inBatch ? `batch[${i}].` : '');
    if (problem) return { problem };
  }
  return {
    accepted: calls.map((call, i) => ({
      message: acceptCall(call, receivedAtMs, batchSentAt, (timestamp) => contentMessageId(call, timestamp, i)),
      deliverable: isIntegrationEnabled(call.fields.integrations as Record<string, unknown> | undefined),
    })),
  };
}
