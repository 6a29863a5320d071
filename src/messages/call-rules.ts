import type { AcceptedMessage } from '../delivery/payload';
import { correctTimestamp, isIsoDateTime } from '../delivery/timestamps';
import type { CallType } from '../delivery/types';

/** Seed, Limits: 32 KB per call, 500 KB per batch request. */
export const MAX_MESSAGE_BYTES = 32 * 1024;
export const MAX_BATCH_BYTES = 500 * 1024;

export type RawMessage = Record<string, unknown>;

const isPresent = (value: unknown) => value !== undefined && value !== null && value !== '';
const asId = (value: unknown) => (isPresent(value) ? String(value) : undefined);

/**
 * The rules a call must follow beyond its JSON shape (schema-checked first), as `field: rule`;
 * undefined when it is valid. `at` prefixes field names inside a batch (`batch[3].`).
 */
export function messageProblem(raw: RawMessage, type: CallType, at = ''): string | undefined {
  const bytes = Buffer.byteLength(JSON.stringify(raw), 'utf8');
  if (bytes > MAX_MESSAGE_BYTES) return `${at || 'message'}: is ${bytes} bytes; a message may be at most ${MAX_MESSAGE_BYTES} bytes (32 KB)`;
  if (type === 'alias') {
    if (!isPresent(raw.userId)) return `${at}userId: is required for alias calls (the new identity)`;
    if (!isPresent(raw.previousId)) return `${at}previousId: is required for alias calls (the identity aliased from)`;
  } else if (!isPresent(raw.userId) && !isPresent(raw.anonymousId)) {
    return `${at}userId: userId or anonymousId is required for ${type} calls`;
  }
  if (type === 'track' && !isPresent(raw.event)) return `${at}event: is required for track calls`;
  if (type === 'group' && !isPresent(raw.groupId)) return `${at}groupId: is required for group calls`;
  for (const field of ['timestamp', 'sentAt', 'originalTimestamp'] as const) {
    const value = raw[field];
    if (value !== undefined && (typeof value !== 'string' || !isIsoDateTime(value))) {
      return `${at}${field}: must be an ISO 8601 date-time with a time zone, e.g. 2026-01-31T12:00:00.000Z`;
    }
  }
  return undefined;
}

/** A valid call made ready for delivery: ids as strings, messageId filled, timestamps corrected. */
export function acceptMessage(raw: RawMessage, type: CallType, receivedAtMs: number, batchSentAt: string | undefined, newMessageId: () => string): AcceptedMessage {
  const sentAt = (raw.sentAt as string | undefined) ?? batchSentAt;
  const timestamp = (raw.timestamp ?? raw.originalTimestamp) as string | undefined;
  return {
    type,
    messageId: asId(raw.messageId) ?? newMessageId(),
    userId: asId(raw.userId),
    anonymousId: asId(raw.anonymousId),
    timestamp: correctTimestamp(receivedAtMs, timestamp, sentAt),
    receivedAt: new Date(receivedAtMs).toISOString(),
    context: (raw.context as Record<string, unknown> | undefined) ?? {},
    properties: raw.properties as Record<string, unknown> | undefined,
    traits: raw.traits as Record<string, unknown> | undefined,
    event: raw.event as string | undefined,
    name: raw.name as string | undefined,
    category: raw.category as string | undefined,
    groupId: asId(raw.groupId),
    previousId: asId(raw.previousId),
  };
}
