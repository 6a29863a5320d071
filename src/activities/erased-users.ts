import { log } from '@temporalio/activity';
import { erasableIds, erasedBeforeSend, ERASED_REASON } from '../delivery/erasure';
import type { AttemptRequest, AttemptResult, MessageBody } from '../delivery/types';
import { openBody } from '../privacy/sealed-body';
import type { Store } from '../store/types';

/** An attempt whose body is readable: what the send step works with (never written to history). */
export type OpenAttemptRequest = Omit<AttemptRequest, 'message' | 'sealedMessage'> & { message: MessageBody };

/**
 * Checks, at send time, that no DELETE regulation erased the message's user after it was accepted.
 * A sealed body (crypto-shredding) opens only while its subject's data key exists: the regulation
 * destroyed it, so nothing is sent, whichever workflow asks — one the visibility index did not
 * show, a history imported back, a redelivery. A plaintext body (delete notifications, inputs from
 * before sealing) is checked against the erased-id list, so deliveries running across the upgrade
 * are still stopped. Either way an erased message sends nothing and stops its destination
 * (stopped, not failed: nothing is wrong with the webhook).
 */
export function stoppingErasedUsers(store: Pick<Store, 'erasures' | 'dataKeys'>, attempt: (req: OpenAttemptRequest) => Promise<AttemptResult>) {
  const erased = (req: AttemptRequest): AttemptResult => {
    log.info(ERASED_REASON, { destinationId: req.destinationId, messageId: req.messageId });
    return { destinationEnabled: false, webhookCount: 0, outcome: { kind: 'permanent', reason: ERASED_REASON } };
  };
  return async function attemptWebhook(req: AttemptRequest): Promise<AttemptResult> {
    const { message, sealedMessage, ...rest } = req;
    if (sealedMessage) {
      const key = await store.dataKeys.get(sealedMessage.subject);
      if (!key) return erased(req);
      return attempt({ ...rest, message: openBody(key, req.messageId, sealedMessage) });
    }
    if (!message) throw new Error(`attempt of message ${req.messageId} carries no body`);
    const ids = erasableIds(message);
    if (ids.length > 0 && erasedBeforeSend(message, await store.erasures.erasedAt(ids))) return erased(req);
    return attempt({ ...rest, message });
  };
}
