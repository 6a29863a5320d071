/**
 * Corrects a client's clock skew the way Segment does: the client's `sentAt` and `timestamp` were
 * read from the same (possibly wrong) clock, so their difference is trustworthy and is subtracted
 * from our `receivedAt`. Without `sentAt` the client's timestamp is kept as is (historical import).
 * Returns ISO 8601 UTC with milliseconds (seed).
 */
export function correctTimestamp(receivedAtMs: number, timestamp?: string, sentAt?: string): string {
  if (timestamp === undefined) return new Date(receivedAtMs).toISOString();
  const original = Date.parse(timestamp);
  if (sentAt === undefined) return new Date(original).toISOString();
  return new Date(receivedAtMs - (Date.parse(sentAt) - original)).toISOString();
}

/** ISO 8601 date-time with a time zone, as Segment clients send it (`Date.parse` alone accepts too much). */
export function isIsoDateTime(value: string): boolean {
  return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/.test(value) && !Number.isNaN(Date.parse(value));
}

/**
 * When a call's consent preferences take effect, to order them against
 * others: the call's timestamp, but never later than when Switchyard received it. Without `sentAt`
 * the timestamp is the client's own clock, and a future one (a wrong clock, or anyone holding the
 * public browser write key) would otherwise outrank every later revocation of that user.
 */
export function consentTime(timestamp: string, receivedAt: string): string {
  const at = Date.parse(timestamp);
  return !Number.isNaN(at) && at <= Date.parse(receivedAt) ? timestamp : receivedAt;
}
