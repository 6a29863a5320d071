import type { DeliveryPolicy } from './types';

/**
 * Wait before round `round + 1` (round counts from 1): exponential from the initial backoff, capped,
 * with "equal jitter" (half fixed, half random) so retries from many messages spread out without
 * ever collapsing to zero. A Retry-After asks for at least that long. `random` is in [0, 1).
 */
export function nextBackoff(round: number, policy: Pick<DeliveryPolicy, 'initialBackoffMs' | 'maxBackoffMs'>, random: number, retryAfterMs?: number): number {
  const exponential = policy.initialBackoffMs * 2 ** Math.min(round - 1, 30);
  const base = Math.min(policy.maxBackoffMs, exponential);
  const jittered = Math.round(base / 2 + (base / 2) * random);
  return Math.max(jittered, retryAfterMs ?? 0);
}

/** The retry window is a hard deadline from the first attempt: a round that would start after it is not started. */
export function canRetryAt(nowMs: number, delayMs: number, deadlineMs: number): boolean {
  return nowMs + delayMs < deadlineMs;
}
