import type { DeliveryPolicy, HoldReason } from './types';

/**
 * Flow control (issue 20) as pure decisions: a destination's rate limit, the waits of a held
 * delivery, and how long a URL that asked for backpressure stays paused. The store keeps the state
 * (shared by every API and worker process) and calls these inside one write transaction; the
 * workflow imports the hold arithmetic. No clock, no randomness: callers pass `nowMs`.
 */

/** Spacing between two requests to a destination allowed `maxRequestsPerSecond`: no burst, so no one-second window ever holds more. */
export const rateIntervalMs = (maxRequestsPerSecond: number): number => Math.ceil(1000 / maxRequestsPerSecond);

/**
 * GCRA without burst tolerance ("theoretical arrival time"): the next free send slot of the
 * destination is `nextSlotMs`; an ask takes the later of it and now, and moves it one interval on.
 * A slot further out than `maxWaitMs` (what is left of the message's hold budget) is not taken:
 * the message would fail before it, and taking it would only delay the ones behind.
 */
export function reserveSlot(nextSlotMs: number | undefined, nowMs: number, intervalMs: number, maxWaitMs: number): { slotMs: number; reserved: boolean; nextSlotMs: number | undefined } {
  const slotMs = Math.max(nextSlotMs ?? nowMs, nowMs);
  if (slotMs - nowMs > maxWaitMs) return { slotMs, reserved: false, nextSlotMs };
  return { slotMs, reserved: true, nextSlotMs: slotMs + intervalMs };
}

/**
 * The check at the moment of sending: at least one interval after the destination's last request.
 * Reserved slots are an interval apart, but timers fire late by varying amounts; this keeps two
 * late ones from going out together. `waitMs` 0: send now (and `lastSendMs` is now).
 */
export function claimSend(lastSendMs: number | undefined, nowMs: number, intervalMs: number): { waitMs: number; lastSendMs: number } {
  if (lastSendMs !== undefined && nowMs < lastSendMs + intervalMs) return { waitMs: lastSendMs + intervalMs - nowMs, lastSendMs };
  return { waitMs: 0, lastSendMs: nowMs };
}

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
 * store's now (issue 29: relative, so no worker's clock enters it): the time it asked for, at most
 * `boundMs` (the retry window: no delivery could wait longer anyway). Undefined: no pause (another
 * status, or no usable Retry-After).
 */
export function backpressureMs(status: number | undefined, retryAfterMs: number | undefined, boundMs: number): number | undefined {
  if ((status !== 429 && status !== 503) || retryAfterMs === undefined || retryAfterMs <= 0) return undefined;
  return Math.min(retryAfterMs, boundMs);
}
