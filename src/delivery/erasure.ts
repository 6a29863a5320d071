import type { MessageBody } from './types';

/** The fields of a message, or of an accepted call, that name who it is about. */
export type MessageIds = { type: string; userId?: unknown; anonymousId?: unknown; previousId?: unknown };

/**
 * The ids a message is about, as a DELETE regulation sees them: its userId, its anonymousId and an
 * alias's previousId. A delete notification is about none: it is what the regulation sends.
 */
export function erasableIds(message: MessageIds): string[] {
  if (message.type === 'delete') return [];
  const ids = [message.userId, message.anonymousId, message.previousId].filter((id): id is string => typeof id === 'string' && id.length > 0);
  return [...new Set(ids)];
}

/**
 * Whether a message must not be sent because a regulation erased one of its ids after it was
 * accepted (`erasedAt`: the latest such regulation, ISO 8601). A message accepted after the
 * regulation is a new call from the user and goes out; one with no readable acceptance time is held back.
 */
export function erasedBeforeSend(message: MessageBody, erasedAt: string | undefined): boolean {
  if (erasedAt === undefined) return false;
  const acceptedAt = message.receivedAt ?? message.timestamp;
  const accepted = typeof acceptedAt === 'string' ? Date.parse(acceptedAt) : NaN;
  return Number.isNaN(accepted) || accepted <= Date.parse(erasedAt);
}

/** Said in the attempt's result and logs instead of the id, which the regulation asked Switchyard to forget. */
export const ERASED_REASON = 'not sent: a DELETE regulation erased the user this message is about';
