import { isIsoDateTime } from '../delivery/timestamps';
import { CONSENT_PREFERENCE_EVENT } from '../rules/consent';
import type { Call } from './call';

export { CONSENT_PREFERENCE_EVENT };

/** Seed, Limits: 32 KB per call, 500 KB per batch request. */
export const MAX_CALL_BYTES = 32 * 1024;
export const MAX_BATCH_BYTES = 500 * 1024;

export const isPresent = (value: unknown) => value !== undefined && value !== null && value !== '';

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `context.consent.categoryPreferences` when it is an object (category id → granted), else undefined. */
function categoryPreferences(context: unknown): Record<string, unknown> | undefined {
  const consent = isObject(context) ? context.consent : undefined;
  const preferences = isObject(consent) ? consent.categoryPreferences : undefined;
  return isObject(preferences) ? preferences : undefined;
}

/**
 * The rules a call must follow beyond its JSON shape (schema-checked first), as `field: rule`;
 * undefined when it is valid. `at` prefixes field names inside a batch (`batch[3].`).
 */
export function callProblem({ type, fields }: Call, at = ''): string | undefined {
  const bytes = Buffer.byteLength(JSON.stringify(fields), 'utf8');
  if (bytes > MAX_CALL_BYTES) return `${at || 'message'}: is ${bytes} bytes; a message may be at most ${MAX_CALL_BYTES} bytes (32 KB)`;
  if (type === 'alias') {
    if (!isPresent(fields.userId)) return `${at}userId: is required for alias calls (the new identity)`;
    if (!isPresent(fields.previousId)) return `${at}previousId: is required for alias calls (the identity aliased from)`;
  } else if (!isPresent(fields.userId) && !isPresent(fields.anonymousId)) {
    return `${at}userId: userId or anonymousId is required for ${type} calls`;
  }
  if (type === 'track' && !isPresent(fields.event)) return `${at}event: is required for track calls`;
  // Segment refuses a preference update that carries no preferences: it would record nothing.
  if (type === 'track' && fields.event === CONSENT_PREFERENCE_EVENT && !categoryPreferences(fields.context)) {
    return `${at}context.consent.categoryPreferences: is required for a track named "${CONSENT_PREFERENCE_EVENT}" and must be an object of category → true/false`;
  }
  if (type === 'group' && !isPresent(fields.groupId)) return `${at}groupId: is required for group calls`;
  for (const field of ['timestamp', 'sentAt', 'originalTimestamp'] as const) {
    const problem = dateProblem(`${at}${field}`, fields[field]);
    if (problem) return problem;
  }
  return undefined;
}

/**
 * The rule of every date a sender gives (a call's `timestamp`, `originalTimestamp`, `sentAt`, a
 * batch's `sentAt`): absent, or an ISO 8601 date-time as Segment's libraries send it. Anything else
 * is the sender's mistake to hear about, not a date to guess (`"yesterday"` was a 500).
 */
export function dateProblem(field: string, value: unknown): string | undefined {
  if (value === undefined || (typeof value === 'string' && isIsoDateTime(value))) return undefined;
  return `${field}: must be an ISO 8601 date-time with a time zone, e.g. 2026-01-31T12:00:00.000Z`;
}
