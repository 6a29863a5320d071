import { createHash } from 'node:crypto';
import { correctTimestamp } from '../delivery/timestamps';
import type { CallType } from '../delivery/types';

/**
 * What an accepted call changes in the profiles (issue 5, "Profiles"): identify merges traits,
 * track records an event, alias links two ids. Page, screen and group calls change nothing here.
 * A call with both a userId and an anonymousId also links them (the same person, before and after
 * logging in), the way Segment's identity resolution does.
 */
export type ProfileUpdate =
  | { type: 'identify'; userId?: string; anonymousId?: string; traits: Record<string, unknown> }
  | { type: 'track'; userId?: string; anonymousId?: string; messageId: string; event: string; properties: Record<string, unknown>; timestamp: string }
  | { type: 'alias'; userId: string; previousId: string };

type RawCall = { raw: Record<string, unknown>; type: CallType };

const asId = (value: unknown) => (value === undefined || value === null || value === '' ? undefined : String(value));
const asObject = (value: unknown) => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {});

/**
 * A track call without a messageId still gets a stable id, from its content, so the same call
 * re-sent after a lost answer counts once (two identical events in the same millisecond count once
 * too, which is the lesser error). Segment's libraries always send a messageId.
 */
function contentId(call: Record<string, unknown>, timestamp: string): string {
  return `sha1:${createHash('sha1').update(JSON.stringify([call.userId, call.anonymousId, call.event, timestamp, call.properties ?? null])).digest('hex')}`;
}

/** The profile side of validated calls; `receivedAtMs` and `batchSentAt` correct timestamps as delivery does. */
export function profileUpdates(calls: RawCall[], receivedAtMs: number, batchSentAt?: string): ProfileUpdate[] {
  const updates: ProfileUpdate[] = [];
  for (const { raw, type } of calls) {
    const userId = asId(raw.userId);
    const anonymousId = asId(raw.anonymousId);
    if (type === 'identify') {
      updates.push({ type, userId, anonymousId, traits: asObject(raw.traits) });
    } else if (type === 'track') {
      const timestamp = correctTimestamp(receivedAtMs, (raw.timestamp ?? raw.originalTimestamp) as string | undefined, (raw.sentAt as string | undefined) ?? batchSentAt);
      const messageId = asId(raw.messageId) ?? contentId(raw, timestamp);
      updates.push({ type, userId, anonymousId, messageId, event: String(raw.event), properties: asObject(raw.properties), timestamp });
    } else if (type === 'alias' && userId && asId(raw.previousId)) {
      updates.push({ type, userId, previousId: asId(raw.previousId)! });
    }
  }
  return updates;
}
