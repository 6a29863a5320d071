import { erasableIds, type MessageIds } from '../delivery/erasure';
import type { Store } from '../store/types';

/**
 * Of the ids these messages are about (userId, anonymousId, an alias's previousId), those a
 * SUPPRESS regulation suppresses now: one store read for a whole request, whose answer
 * `isAboutSuppressed` (delivery/suppression.ts) then applies to each message.
 */
export async function suppressedUsers(suppressions: Pick<Store['suppressions'], 'suppressedAmong'>, messages: MessageIds[]): Promise<ReadonlySet<string>> {
  const ids = [...new Set(messages.flatMap(erasableIds))];
  return ids.length === 0 ? new Set() : suppressions.suppressedAmong(ids);
}
