import { log } from '@temporalio/activity';
import { erasableIds, erasedBeforeSend, ERASED_REASON, type CallIds } from '../delivery/erasure';
import type { AttemptRequest, AttemptResult, MessageBody, SealedBody } from '../delivery/types';
import { suppressedBeforeSend, SUPPRESSED_REASON } from '../delivery/suppression';
import { openBody, openCallIds, openTraceContext, ReplacedKeyError, sealBody, type SealPurpose } from '../privacy/sealed-body';
import { isTraceCarrier } from '../tracing/trace-carrier';
import type { Store } from '../store/types';

/** An attempt whose body is readable: what the send step works with (never written to history). */
export type OpenAttemptRequest = Omit<AttemptRequest, 'message' | 'sealedMessage'> & {
  message: MessageBody;
  /** Seals a value of this attempt under the message's own data key, as its body is (absent when the body came in the clear). */
  seal?: (value: Record<string, unknown>, purpose: SealPurpose) => SealedBody;
};

/**
 * Checks, at send time, that no DELETE regulation erased the message's user after it was accepted,
 * and that no SUPPRESS regulation suppressed it.
 * A sealed body (crypto-shredding) opens only while its subject's data key exists: the regulation
 * destroyed it, so nothing is sent, whichever workflow asks — one the visibility index did not
 * show, a history imported back, a redelivery. Every body, opened or plaintext (delete
 * notifications, inputs from before sealing), is also checked against the erased-id list: it stops
 * deliveries running across the upgrade, and a call accepted before a regulation whose sealing
 * landed after it (under the user's new key). Either way an erased message sends nothing and stops its destination
 * (stopped, not failed: nothing is wrong with the webhook).
 */
export function stoppingErasedUsers(store: Pick<Store, 'erasures' | 'dataKeys' | 'suppressions'>, attempt: (req: OpenAttemptRequest) => Promise<AttemptResult>) {
  const stopped = (req: AttemptRequest, reason: string): AttemptResult => {
    log.info(reason, { destinationId: req.destinationId, messageId: req.messageId });
    return { destinationEnabled: false, webhookCount: 0, outcome: { kind: 'permanent', reason } };
  };
  const erased = (req: AttemptRequest) => stopped(req, ERASED_REASON);
  return async function attemptWebhook(req: AttemptRequest): Promise<AttemptResult> {
    const { message: plain, sealedMessage, trace: plainTrace, ...rest } = req;
    let message = plain;
    // The message's trace context, beside its body (sealed with it, or in the clear with a
    // plaintext body); whatever does not read as one is dropped, never a reason not to send.
    let trace: unknown = plainTrace;
    // The call's ids, sealed beside the body, whatever this destination's filters
    // left in it; a body sealed before them (or in the clear) has only its own.
    let call: CallIds | undefined;
    let key: Buffer | undefined;
    if (sealedMessage) {
      key = await store.dataKeys.get(sealedMessage.subject);
      if (!key) return erased(req);
      try {
        message = openBody(key, req.messageId, sealedMessage);
      } catch (err) {
        // Sealed under a key a regulation destroyed since (the user came back with a new one): erased.
        if (err instanceof ReplacedKeyError) return erased(req);
        throw err;
      }
      call = openCallIds(key, req.messageId, sealedMessage);
      trace = openTraceContext(key, req.messageId, sealedMessage);
    }
    if (!message) throw new Error(`attempt of message ${req.messageId} carries no body`);
    const about = call ?? message;
    // Also for an opened body: a call accepted just before a regulation but planned just after it
    // was sealed under the user's new key, and only its acceptance time tells it from a new call.
    const ids = erasableIds(about);
    if (ids.length > 0 && erasedBeforeSend(about, await store.erasures.erasedAt(ids))) return erased(req);
    // A suppressed user's running deliveries stop like an erased one's, and stay stopped
    // after an UNSUPPRESS (it lifts the suppression for new calls only).
    if (ids.length > 0 && suppressedBeforeSend(about, await store.suppressions.of(ids))) return stopped(req, SUPPRESSED_REASON);
    const seal = sealedMessage && ((value: Record<string, unknown>, purpose: SealPurpose) => sealBody(key!, sealedMessage.subject, req.messageId, value as MessageBody, purpose));
    return attempt({ ...rest, message, ...(isTraceCarrier(trace) && { trace }), ...(seal && { seal }) });
  };
}
