import type { DeliveryPolicy, HoldReason } from './types';

/**
 * Flow control as pure decisions: a destination's rate limit, the waits of a held
 * delivery, and how long a URL that asked for backpressure stays paused. The store keeps the state
 * (shared by every API and worker process) and calls these inside one write transaction; the
 * workflow imports the hold arithmetic. No clock, no randomness: callers pass `nowMs` (the
 * limiter's `nowUs`).
 */

/**
 * Spacing between two requests to a destination allowed `maxRequestsPerSecond`, in microseconds: no
 * burst, so no one-second window ever holds more. Microseconds: 1/N s for any N up to
 * the 10,000/s a destination may be allowed (100 µs), where whole-millisecond slots made every limit
 * above 1,000/s act as 1,000/s. Rounded up, never faster.
 */
export const rateIntervalUs = (maxRequestsPerSecond: number): number => Math.ceil(1_000_000 / maxRequestsPerSecond);

/**
 * GCRA without burst tolerance ("theoretical arrival time"): the next free send slot of the
 * destination is `nextSlotUs`; an ask takes the later of it and now, and moves it one interval on.
 * A slot further out than `maxWaitUs` (what is left of the message's hold budget) is not taken:
 * the message would fail before it, and taking it would only delay the ones behind.
 */
export function reserveSlot(nextSlotUs: number | undefined, nowUs: number, intervalUs: number, maxWaitUs: number): { slotUs: number; reserved: boolean; nextSlotUs: number | undefined } {
  const slotUs = Math.max(nextSlotUs ?? nowUs, nowUs);
  if (slotUs - nowUs > maxWaitUs) return { slotUs, reserved: false, nextSlotUs };
  return { slotUs, reserved: true, nextSlotUs: slotUs + intervalUs };
}

/**
 * How far ahead a send may be claimed (one millisecond, the resolution of a timer): a wait shorter
 * than this is one no timer times closer, so asking again after it would only repeat the ask. Under
 * a limit above 1,000/s several sends fall within one such tick; each claims its own moment, an
 * interval after the last, and waits for it.
 */
export const SEND_AHEAD_US = 1_000;

/**
 * The check at the moment of sending: at least one interval after the destination's last request.
 * Reserved slots are an interval apart, but timers fire late by varying amounts; this keeps two
 * late ones from going out together. The send is claimed (`lastSendUs` becomes `sendAtUs`) when its
 * moment is less than SEND_AHEAD_US away, and the sender waits `waitUs` before sending; otherwise
 * nothing changes and the sender asks again after `waitUs`.
 */
export function claimSend(lastSendUs: number | undefined, nowUs: number, intervalUs: number): { claimed: boolean; sendAtUs: number; waitUs: number; lastSendUs: number | undefined } {
  const sendAtUs = lastSendUs === undefined ? nowUs : Math.max(nowUs, lastSendUs + intervalUs);
  const waitUs = sendAtUs - nowUs;
  const claimed = waitUs < SEND_AHEAD_US;
  return { claimed, sendAtUs, waitUs, lastSendUs: claimed ? sendAtUs : lastSendUs };
}

/**
 * A rate limit's wait this short is waited out inside the attempt, holding its webhook room: as a
 * hold it would cost the workflow a timer, a workflow task and a new activity to save a few
 * milliseconds. Such waits are common under any limit: the limiter spaces sends evenly (no burst),
 * so attempts arriving together (a batch's deliveries start at once) queue a slot apart.
 */
export const IN_ATTEMPT_WAIT_MS = 20;

/**
 * What an attempt does with a wait the limiter handed it, having waited `waitedMs` inside itself
 * already: `none`, less than a timer tick (a slot: the claim at send time waits for its moment);
 * `here`, slept inside the attempt (IN_ATTEMPT_WAIT_MS in all, at most); `hold`, handed to the
 * workflow as a hold.
 */
export function limiterWait(waitedMs: number, waitUs: number): 'none' | 'here' | 'hold' {
  if (waitUs < SEND_AHEAD_US) return 'none';
  return waitedMs + waitUs / 1_000 <= IN_ATTEMPT_WAIT_MS ? 'here' : 'hold';
}

/**
 * A limiter wait as a hold's `waitMs`: whole milliseconds (the workflow times it with a timer),
 * rounded up so the hold never ends before the slot.
 */
export const holdMsOf = (waitUs: number): number => Math.ceil(waitUs / 1_000);

/**
 * A reserved slot as the attempt request and hold carry it (`reservedSlotMs`): the epoch
 * millisecond the slot falls in, the field's meaning since flow control began, so a delivery that held a slot
 * across the upgrade to µs slots reads the same. Only its presence is read (the slot is taken).
 */
export const slotMsOf = (slotUs: number): number => Math.floor(slotUs / 1_000);

/** First wait of a paused delivery before it asks again; doubling up to the policy's holdCheckMs. */
export const HOLD_FIRST_CHECK_MS = 500;

/**
 * How long a held delivery waits before asking again, after `consecutive` (from 1) hold answers in
 * a row. Throttled and backpressured answers say how long; a paused destination does not know when
 * it is resumed, so the delivery asks again, doubling from HOLD_FIRST_CHECK_MS to `holdCheckMs`
 * (a 72 h hold then costs a few thousand short timers, inside Temporal's history limits).
 * Never more than is left of the hold budget.
 */
export function holdWaitMs(hold: { reason: HoldReason; waitMs?: number }, consecutive: number, policy: Pick<DeliveryPolicy, 'holdCheckMs'>, holdLeftMs: number): number {
  const asked = hold.waitMs ?? Math.min(policy.holdCheckMs ?? HOLD_FIRST_CHECK_MS, HOLD_FIRST_CHECK_MS * 2 ** Math.min(consecutive - 1, 30));
  return Math.max(1, Math.min(asked, holdLeftMs));
}

/** The reason a delivery held past its budget fails with. */
export function holdExceededReason(maxHoldMs: number, last: HoldReason): string {
  return `held longer than DELIVERY_MAX_HOLD (${maxHoldMs} ms); last held because ${HOLD_WORDS[last]}`;
}

const HOLD_WORDS: Record<HoldReason, string> = {
  paused: 'the destination is paused',
  throttled: 'of the destination\'s maxRequestsPerSecond',
  backpressure: 'the webhook URL asked for backpressure (429/503 with Retry-After)',
};

/**
 * How long a URL that answered 429 or 503 with Retry-After is paused for every message, from the
 * store's now (relative, so no worker's clock enters it): the time it asked for, at most
 * `boundMs` (the retry window: no delivery could wait longer anyway). Undefined: no pause (another
 * status, or no usable Retry-After).
 */
export function backpressureMs(status: number | undefined, retryAfterMs: number | undefined, boundMs: number): number | undefined {
  if ((status !== 429 && status !== 503) || retryAfterMs === undefined || retryAfterMs <= 0) return undefined;
  return Math.min(retryAfterMs, boundMs);
}
