import { erasableIds, type AcceptanceTimes, type MessageIds } from './erasure';

/**
 * One id's suppression as the store keeps it: from when a SUPPRESS_ONLY or
 * SUPPRESS_WITH_DELETE regulation suppressed it, and when an UNSUPPRESS lifted it, if one did.
 */
export interface Suppression {
  suppressedAt: string;
  liftedAt?: string;
}

/** Whether any of these suppressions still holds: new calls about its id are answered but go nowhere. */
export function isSuppressed(suppressions: Suppression[]): boolean {
  return suppressions.some((s) => s.liftedAt === undefined);
}

/**
 * Whether a message must not be sent at attempt time: one of its ids is suppressed now, or was
 * suppressed after the message was accepted. UNSUPPRESS lifts a suppression for new calls only,
 * so a delivery stopped by it stays stopped; one with no readable acceptance time is held back.
 */
export function suppressedBeforeSend(message: AcceptanceTimes, suppressions: Suppression[]): boolean {
  if (suppressions.length === 0) return false;
  if (isSuppressed(suppressions)) return true;
  const acceptedAt = message.receivedAt ?? message.timestamp;
  const accepted = typeof acceptedAt === 'string' ? Date.parse(acceptedAt) : NaN;
  return Number.isNaN(accepted) || suppressions.some((s) => accepted <= Date.parse(s.suppressedAt));
}

/**
 * Whether a message is about one of `suppressed` (ids suppressed now): the ingest rule. The same
 * ids as an erasure looks at (userId, anonymousId, an alias's previousId); a delete notification
 * is about none, so it is never suppressed.
 */
export function isAboutSuppressed(message: MessageIds, suppressed: ReadonlySet<string>): boolean {
  return suppressed.size > 0 && erasableIds(message).some((id) => suppressed.has(id));
}

/** Said in the attempt's result and logs instead of the id. */
export const SUPPRESSED_REASON = 'not sent: a SUPPRESS regulation suppressed the user this message is about';
