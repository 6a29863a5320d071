import { holdMsOf, limiterWait, rateIntervalUs, slotMsOf } from '../delivery/flow-control';
import type { AttemptRequest, Hold } from '../delivery/types';
import type { Metrics } from '../metrics';
import type { Destination, DestinationWebhook, Store } from '../store/types';

export type FlowMetrics = Pick<Metrics, 'heldMessages' | 'throttledWaits' | 'backpressuredWaits'>;

/**
 * The URL an attempt sends to, for its backpressure; a function destination's attempt has none (its
 * handler's fetch calls go where its code says), so only the pause and the rate limit hold it.
 */
export type AdmittedUrl = Pick<DestinationWebhook, 'url' | 'backpressure'>;

export interface AdmissionClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}
const realClock: AdmissionClock = { now: Date.now, sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) };

/**
 * Whether an attempt may send now, asked right before sending: a paused destination
 * holds it, a URL under backpressure holds it until its time, and a rate-limited destination hands
 * it a send slot (shared by every worker through the store). A hold is an answer, not a failed
 * attempt: the workflow waits it out, uncounted, and asks again.
 */
export function makeAdmission(store: Pick<Store, 'flowControl'>, metrics?: FlowMetrics, clock: AdmissionClock = realClock) {
  async function decide(req: AttemptRequest, destination: Destination, webhook: AdmittedUrl | undefined, startMs: number): Promise<Hold | undefined> {
    if (destination.paused) return { reason: 'paused' };
    // The destination read (cached on PostgreSQL) only says the URL was paused; the store says how
    // long is left by its own clock, and a pause this delivery already waited out on its
    // own clock holds it no longer.
    if (webhook?.backpressure) {
      const pressure = await store.flowControl.backpressureLeft(destination.id, webhook.url);
      if (pressure && pressure.untilMs !== req.waitedOutPressureMs) return { reason: 'backpressure', waitMs: pressure.leftMs, pressureUntilMs: pressure.untilMs };
    }
    if (destination.maxRequestsPerSecond === null) return undefined;
    const intervalUs = rateIntervalUs(destination.maxRequestsPerSecond);
    let nowMs = startMs;
    const waitHere = async (waitUs: number) => {
      await clock.sleep(waitUs / 1_000);
      nowMs = Math.max(nowMs + waitUs / 1_000, clock.now());
    };
    let slotMs = req.reservedSlotMs;
    if (slotMs === undefined) {
      const slot = await store.flowControl.reserveSlot(destination.id, intervalUs, req.holdLeftMs === undefined ? Number.MAX_SAFE_INTEGER : req.holdLeftMs * 1_000);
      // Not reserved: the slot lies past this message's hold budget; it waits that out and fails.
      if (!slot.reserved) return { reason: 'throttled', waitMs: holdMsOf(slot.waitUs) };
      slotMs = slotMsOf(slot.slotUs);
      const wait = limiterWait(nowMs - startMs, slot.waitUs);
      if (wait === 'hold') return { reason: 'throttled', waitMs: holdMsOf(slot.waitUs), reservedSlotMs: slotMs };
      if (wait === 'here') await waitHere(slot.waitUs);
    }
    for (;;) {
      const claim = await store.flowControl.claimSend(destination.id, intervalUs);
      if (claim.claimed) {
        // Its moment is less than a timer tick away: a timer, and the request goes out after it.
        if (claim.waitUs > 0) await clock.sleep(claim.waitUs / 1_000);
        return undefined;
      }
      if (limiterWait(nowMs - startMs, claim.waitUs) === 'hold') return { reason: 'throttled', waitMs: holdMsOf(claim.waitUs), reservedSlotMs: slotMs };
      await waitHere(claim.waitUs);
    }
  }

  return async function admit(req: AttemptRequest, destination: Destination, webhook: AdmittedUrl | undefined, nowMs: number): Promise<Hold | undefined> {
    const hold = await decide(req, destination, webhook, nowMs);
    const labels = { destination: destination.id };
    if (hold?.reason === 'paused' && req.afterHold?.reason !== 'paused') metrics?.heldMessages.inc(labels);
    if (hold?.reason === 'throttled') metrics?.throttledWaits.inc(labels);
    if (hold?.reason === 'backpressure') metrics?.backpressuredWaits.inc(labels);
    return hold;
  };
}
