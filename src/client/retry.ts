/**
 * Pure retry decisions: which attempt outcomes can succeed later, and how long to wait before the
 * next attempt. No clock or randomness is read here; callers pass them in.
 */

/** What one HTTP attempt came to, as seen by the transport. */
export type AttemptResult =
  | { kind: 'response'; status: number; retryAfter?: string; body: string }
  | { kind: 'network_error'; error: Error; timedOut: boolean }
  /** `close({ timeout })` cut the attempt short; nothing more will be tried. */
  | { kind: 'aborted' };

export type AttemptVerdict = 'delivered' | 'retry' | 'fail';

/**
 * 2xx is delivered. Network errors, timeouts, 408, 429 and 5xx may succeed later. Any other
 * answer (400 bad message, 401 wrong write key, 413, a redirect) will not change on retry.
 */
export function classifyAttempt(result: AttemptResult): AttemptVerdict {
  if (result.kind === 'aborted') return 'fail';
  if (result.kind === 'network_error') return 'retry';
  const { status } = result;
  if (status >= 200 && status < 300) return 'delivered';
  if (status === 408 || status === 429 || (status >= 500 && status < 600)) return 'retry';
  return 'fail';
}

/**
 * A server's Retry-After is honoured up to this long; past it the header is more likely a mistake
 * than a plan, and a client that waits an hour holds its whole queue for that hour.
 */
export const RETRY_AFTER_CAP_MS = 5 * 60_000;

/** `Retry-After` as milliseconds from `nowMs`: delta-seconds or an HTTP-date (RFC 9110 §10.2.3). */
export function parseRetryAfter(header: string | undefined, nowMs: number): number | undefined {
  if (header === undefined) return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  if (!/[a-z]/i.test(value)) return undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

export interface Backoff {
  initial: number;
  max: number;
}

/**
 * Capped exponential backoff with "equal jitter": before retry n (1-based) the ceiling is
 * `initial * 2^(n-1)` capped at `max`, and the wait is uniformly between half the ceiling and the
 * ceiling, so clients that failed together do not retry together, yet never retry at once.
 * `random` is in [0, 1).
 */
export function backoffDelay(retry: number, backoff: Backoff, random: number): number {
  const ceiling = Math.min(backoff.max, backoff.initial * 2 ** Math.max(0, retry - 1));
  return Math.round(ceiling / 2 + (ceiling / 2) * random);
}

/** The wait before retry n: the backoff, or longer if the server asked for longer (up to the cap). */
export function retryDelay(retry: number, backoff: Backoff, retryAfterMs: number | undefined, random: number): number {
  const own = backoffDelay(retry, backoff, random);
  return retryAfterMs === undefined ? own : Math.max(own, Math.min(retryAfterMs, RETRY_AFTER_CAP_MS));
}
