import type { Message } from '../delivery/payload';
import { consentTime } from '../delivery/timestamps';
import { categoryPreferences } from '../rules/consent';

/**
 * What an accepted call changes in the profiles (docs/personas.md): identify merges traits,
 * track records an event, alias links two ids. Page, screen and group calls change nothing here.
 * A call with both a userId and an anonymousId also links them (the same person, before and after
 * logging in), the way Segment's identity resolution does. Any call with consent preferences also
 * records them on its profile.
 */
export type ProfileUpdate =
  | { type: 'identify'; userId?: string; anonymousId?: string; traits: Record<string, unknown> }
  | { type: 'track'; userId?: string; anonymousId?: string; messageId: string; event: string; properties: Record<string, unknown>; timestamp: string }
  | { type: 'alias'; userId: string; previousId: string }
  /** Any call carrying `context.consent.categoryPreferences`: the profile keeps the newest. */
  | { type: 'consent'; userId?: string; anonymousId?: string; preferences: Record<string, unknown>; timestamp: string; receivedAt: string };

const asObject = (value: unknown) => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {});

/**
 * The profile side of accepted messages. A track event keeps its message's id and corrected
 * timestamp, the same ones its delivery carries, so a re-sent message counts once.
 */
export function profileUpdates(messages: Message[]): ProfileUpdate[] {
  const updates: ProfileUpdate[] = [];
  for (const { type, userId, anonymousId, ...message } of messages) {
    if (type === 'identify') {
      updates.push({ type, userId, anonymousId, traits: asObject(message.traits) });
    } else if (type === 'track') {
      updates.push({ type, userId, anonymousId, messageId: message.messageId, event: String(message.event), properties: asObject(message.properties), timestamp: message.timestamp });
    } else if (type === 'alias' && userId && message.previousId) {
      updates.push({ type, userId, previousId: message.previousId });
    }
    const consent = consentUpdate({ type, userId, anonymousId, ...message });
    if (consent) updates.push(consent);
  }
  return updates;
}

/**
 * The consent preferences a call carries, as a profile update; undefined without them or without
 * an id. Also made for calls whose fate keeps them out of the profiles otherwise (a call the plan
 * blocked: messages/call-fate.ts), since consent is a fact about the user, not a tracked event.
 */
export function consentUpdate(message: Message): ProfileUpdate | undefined {
  const { userId, anonymousId } = message;
  // Personas syncs send a profile's audience changes only where its latest preferences allow.
  const preferences = categoryPreferences({ context: message.context });
  // Ordered by when they took effect, never later than their receipt (timestamps.ts consentTime).
  if (!preferences || !(userId || anonymousId)) return undefined;
  return { type: 'consent', userId, anonymousId, preferences, timestamp: consentTime(message.timestamp, message.receivedAt), receivedAt: message.receivedAt };
}
