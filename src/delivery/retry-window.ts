import type { DeliveryPolicy } from './types';

/**
 * The retry window as a hard deadline (seed: retries for a maximum of 4 hours), and the waits that
 * do not count as a failed round. Pure: the workflow imports it.
 */

/**
 * How long past the window Temporal lets a delivery run (its workflow execution timeout). Every
 * attempt already ends by the window's end (its schedule-to-close is the time left); the grace is
 * for the workflow to record its own end, `failed` in SwitchyardStatus, when a worker is there to
 * run it. A delivery whose workers stay away past it is timed out by Temporal (ExecutionStatus
 * TimedOut, SwitchyardStatus left at its last value) and still sends nothing after the window.
 */
export const EXECUTION_GRACE_MS = 60_000;

/**
 * The workflow's execution timeout. A start delay is added: the window counts from the workflow's
 * first task; so is the longest hold, since held time moves the window's end.
 */
export function executionTimeoutMs(policy: Pick<DeliveryPolicy, 'retryWindowMs' | 'maxHoldMs'>, startDelayMs = 0): number {
  return policy.retryWindowMs + (policy.maxHoldMs ?? 0) + startDelayMs + EXECUTION_GRACE_MS;
}

/**
 * How long one attempt may wait for an answer: the webhook's timeout, cut to what is left of the
 * window. Zero or less: the window has ended and no request may be sent.
 */
export function attemptBudgetMs(timeoutMs: number, notAfterMs: number | undefined, nowMs: number): number {
  return notAfterMs === undefined ? timeoutMs : Math.min(timeoutMs, notAfterMs - nowMs);
}

/** First wait of a busy webhook (WORKER_MAX_IN_FLIGHT_PER_WEBHOOK attempts to it already running). */
export const BUSY_FIRST_WAIT_MS = 250;
/**
 * Longest wait between two asks for a busy webhook's slot. A hanging webhook keeps its slots a whole
 * timeout each; waiting messages then ask about once a minute, so a 4-hour window costs a few
 * hundred short activities per message, well inside Temporal's history limits.
 */
export const BUSY_MAX_WAIT_MS = 60_000;

/**
 * Wait before asking a busy webhook again, after `consecutiveBusy` (from 1) busy answers in a row:
 * doubling from BUSY_FIRST_WAIT_MS up to BUSY_MAX_WAIT_MS (and the policy's max backoff), equal
 * jitter so a burst's waiters do not all ask at once. `random` is in [0, 1).
 */
export function busyWait(consecutiveBusy: number, policy: Pick<DeliveryPolicy, 'maxBackoffMs'>, random: number): number {
  const base = Math.min(BUSY_MAX_WAIT_MS, policy.maxBackoffMs, BUSY_FIRST_WAIT_MS * 2 ** Math.min(consecutiveBusy - 1, 30));
  return Math.round(base / 2 + (base / 2) * random);
}
