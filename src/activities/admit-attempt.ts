import { rateIntervalMs } from '../delivery/flow-control';
import type { AttemptRequest, Hold } from '../delivery/types';
import type { Metrics } from '../metrics';
import type { Destination, DestinationWebhook, Store } from '../store/types';

export type FlowMetrics = Pick<Metrics, 'heldMessages' | 'throttledWaits' | 'backpressuredWaits'>;

/**
 * Whether an attempt may send now (issue 20), asked right before sending: a paused destination
 * holds it, a URL under backpressure holds it until its time, and a rate-limited destination hands
 * it a send slot (shared by every worker through the store). A hold is an answer, not a failed
 * attempt: the workflow waits it out, uncounted, and asks again.
 */
export function makeAdmission(store: Pick<Store, 'flowControl'>, metrics?: FlowMetrics) {
  async function decide(req: AttemptRequest, destination: Destination, webhook: DestinationWebhook, nowMs: number): Promise<Hold | undefined> {
    if (destination.paused) return { reason: 'paused' };
    const until = webhook.backpressure?.untilMs;
    if (until !== undefined && until > nowMs) return { reason: 'backpressure', waitMs: until - nowMs };
    if (destination.maxRequestsPerSecond === null) return undefined;
    const intervalMs = rateIntervalMs(destination.maxRequestsPerSecond);
    let slotMs = req.reservedSlotMs;
    if (slotMs === undefined) {
      const slot = await store.flowControl.reserveSlot(destination.id, intervalMs, nowMs, req.holdLeftMs ?? Number.MAX_SAFE_INTEGER);
      // Not reserved: the slot lies past this message's hold budget; it waits that out and fails.
      if (!slot.reserved) return { reason: 'throttled', waitMs: slot.slotMs - nowMs };
      if (slot.slotMs > nowMs) return { reason: 'throttled', waitMs: slot.slotMs - nowMs, reservedSlotMs: slot.slotMs };
      slotMs = slot.slotMs;
    }
    const waitMs = await store.flowControl.claimSend(destination.id, intervalMs, nowMs);
    return waitMs > 0 ? { reason: 'throttled', waitMs, reservedSlotMs: slotMs } : undefined;
  }

  return async function admit(req: AttemptRequest, destination: Destination, webhook: DestinationWebhook, nowMs: number): Promise<Hold | undefined> {
    const hold = await decide(req, destination, webhook, nowMs);
    const labels = { destination: destination.id };
    if (hold?.reason === 'paused' && req.afterHold?.reason !== 'paused') metrics?.heldMessages.inc(labels);
    if (hold?.reason === 'throttled') metrics?.throttledWaits.inc(labels);
    if (hold?.reason === 'backpressure') metrics?.backpressuredWaits.inc(labels);
    return hold;
  };
}
