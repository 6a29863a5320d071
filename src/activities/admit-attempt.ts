import { rateIntervalMs } from '../delivery/flow-control';
import type { AttemptRequest, Hold } from '../delivery/types';
import type { Metrics } from '../metrics';
import type { Destination, DestinationWebhook, Store } from '../store/types';

export type FlowMetrics = Pick<Metrics, 'heldMessages' | 'throttledWaits' | 'backpressuredWaits'>;

/**
 * A rate limit's wait this short is waited out inside the attempt, holding its webhook room: as a
 * hold it would cost the workflow a timer, a workflow task and a new activity to save a few
 * milliseconds. Such waits are common under any limit: the limiter spaces sends evenly (no burst),
 * so attempts arriving together (a batch's deliveries start at once) queue a slot apart, and at
 * 1,000 requests/s or more two in the same millisecond already wait one.
 */
export const IN_ATTEMPT_WAIT_MS = 20;

export interface AdmissionClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}
const realClock: AdmissionClock = { now: Date.now, sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) };

/**
 * Whether an attempt may send now (issue 20), asked right before sending: a paused destination
 * holds it, a URL under backpressure holds it until its time, and a rate-limited destination hands
 * it a send slot (shared by every worker through the store). A hold is an answer, not a failed
 * attempt: the workflow waits it out, uncounted, and asks again.
 */
export function makeAdmission(store: Pick<Store, 'flowControl'>, metrics?: FlowMetrics, clock: AdmissionClock = realClock) {
  async function decide(req: AttemptRequest, destination: Destination, webhook: DestinationWebhook, startMs: number): Promise<Hold | undefined> {
    if (destination.paused) return { reason: 'paused' };
    // The destination read (cached on PostgreSQL) only says the URL was paused; the store says how
    // long is left by its own clock (issue 29), and a pause this delivery already waited out on its
    // own clock holds it no longer.
    if (webhook.backpressure) {
      const pressure = await store.flowControl.backpressureLeft(destination.id, webhook.url);
      if (pressure && pressure.untilMs !== req.waitedOutPressureMs) return { reason: 'backpressure', waitMs: pressure.leftMs, pressureUntilMs: pressure.untilMs };
    }
    if (destination.maxRequestsPerSecond === null) return undefined;
    const intervalMs = rateIntervalMs(destination.maxRequestsPerSecond);
    let nowMs = startMs;
    // Waits out what is left of IN_ATTEMPT_WAIT_MS from the start of this ask; false: the wait is longer.
    const waitedHere = async (waitMs: number) => {
      if (nowMs + waitMs - startMs > IN_ATTEMPT_WAIT_MS) return false;
      await clock.sleep(waitMs);
      nowMs = Math.max(nowMs + waitMs, clock.now());
      return true;
    };
    let slotMs = req.reservedSlotMs;
    if (slotMs === undefined) {
      const slot = await store.flowControl.reserveSlot(destination.id, intervalMs, req.holdLeftMs ?? Number.MAX_SAFE_INTEGER);
      // Not reserved: the slot lies past this message's hold budget; it waits that out and fails.
      if (!slot.reserved) return { reason: 'throttled', waitMs: slot.waitMs };
      if (slot.waitMs > 0 && !(await waitedHere(slot.waitMs))) return { reason: 'throttled', waitMs: slot.waitMs, reservedSlotMs: slot.slotMs };
      slotMs = slot.slotMs;
    }
    for (;;) {
      const waitMs = await store.flowControl.claimSend(destination.id, intervalMs);
      if (waitMs <= 0) return undefined;
      if (!(await waitedHere(waitMs))) return { reason: 'throttled', waitMs, reservedSlotMs: slotMs };
    }
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
