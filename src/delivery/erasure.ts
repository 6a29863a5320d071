import type { MessageBody } from './types';

/** The fields of a message, or of an accepted call, that name who it is about. */
export type MessageIds = { type: string; userId?: unknown; anonymousId?: unknown; previousId?: unknown };

/**
 * What the send-time checks read of the call a message came from, whatever a
 * destination's filters left in the body it gets: the ids a regulation names and when the call was
 * accepted. Sealed beside every body under the call's data key (privacy/sealed-body.ts).
 */
export type CallIds = { type: string; userId?: string; anonymousId?: string; previousId?: string; receivedAt?: string; timestamp?: string };

const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);

/** The call's ids and acceptance time, read from its unfiltered body. */
export function callIds(type: string, body: MessageBody): CallIds {
  const fields = { userId: text(body.userId), anonymousId: text(body.anonymousId), previousId: text(body.previousId), receivedAt: text(body.receivedAt), timestamp: text(body.timestamp) };
  return { type, ...Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) };
}

/**
 * The ids a message is about, as a DELETE regulation sees them: its userId, its anonymousId and an
 * alias's previousId. A delete notification is about none: it is what the regulation sends.
 */
export function erasableIds(message: MessageIds): string[] {
  if (message.type === 'delete') return [];
  const ids = [message.userId, message.anonymousId, message.previousId].filter((id): id is string => typeof id === 'string' && id.length > 0);
  return [...new Set(ids)];
}

/** When a message says it was accepted: its receivedAt, else its timestamp. */
export type AcceptanceTimes = { type?: unknown; receivedAt?: unknown; timestamp?: unknown };

/**
 * Whether a message must not be sent because a regulation erased one of its ids after it was
 * accepted (`erasedAt`: the latest such regulation, ISO 8601). A message accepted after the
 * regulation is a new call from the user and goes out; one with no readable acceptance time is held back.
 */
export function erasedBeforeSend(message: AcceptanceTimes, erasedAt: string | undefined): boolean {
  if (erasedAt === undefined) return false;
  const acceptedAt = message.receivedAt ?? message.timestamp;
  const accepted = typeof acceptedAt === 'string' ? Date.parse(acceptedAt) : NaN;
  return Number.isNaN(accepted) || accepted <= Date.parse(erasedAt);
}

/** Said in the attempt's result and logs instead of the id, which the regulation asked Switchyard to forget. */
export const ERASED_REASON = 'not sent: a DELETE regulation erased the user this message is about';
