import type { Message } from '../delivery/payload';
import type { SeenUser } from '../store/types';

/**
 * The user ids a request's accepted messages carry, each with the other ids seen beside it (the
 * anonymousId of the same call, an alias's previousId). Every call type counts: a source that only
 * ever sent page calls for a user has still seen that user, and a DELETE regulation must tell it.
 */
export function seenUsers(messages: Pick<Message, 'userId' | 'anonymousId' | 'previousId'>[]): SeenUser[] {
  const linked = new Map<string, Set<string>>();
  for (const { userId, anonymousId, previousId } of messages) {
    if (!userId) continue;
    const ids = linked.get(userId) ?? new Set<string>();
    linked.set(userId, ids);
    for (const other of [anonymousId, previousId]) if (other && other !== userId) ids.add(other);
  }
  return [...linked].map(([userId, ids]) => ({ userId, linkedIds: [...ids] }));
}
