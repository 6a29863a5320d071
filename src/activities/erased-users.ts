import { log } from '@temporalio/activity';
import { erasableIds, erasedBeforeSend, ERASED_REASON } from '../delivery/erasure';
import type { AttemptRequest, AttemptResult } from '../delivery/types';
import type { Store } from '../store/types';

/**
 * Checks, at send time, that no DELETE regulation erased the message's user after it was accepted.
 * A regulation terminates the user's running deliveries, but an attempt can still begin afterwards:
 * one started by a workflow the visibility index did not show yet (a call accepted just before the
 * regulation), or one whose workflow task was already running. Such an attempt sends nothing and
 * stops its destination (stopped, not failed: nothing is wrong with the webhook).
 */
export function stoppingErasedUsers(store: Pick<Store, 'erasures'>, attempt: (req: AttemptRequest) => Promise<AttemptResult>) {
  return async function attemptWebhook(req: AttemptRequest): Promise<AttemptResult> {
    const ids = erasableIds(req.message);
    if (ids.length > 0 && erasedBeforeSend(req.message, await store.erasures.erasedAt(ids))) {
      log.info(ERASED_REASON, { destinationId: req.destinationId, messageId: req.messageId });
      return { destinationEnabled: false, webhookCount: 0, outcome: { kind: 'permanent', reason: ERASED_REASON } };
    }
    return attempt(req);
  };
}
