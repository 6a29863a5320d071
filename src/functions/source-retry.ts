/**
 * Segment's retries of a source function's request: a RetryError or a timeout is tried again up to
 * six times, the first wait 1–3 minutes, growing, at most 20 minutes apart (SOURCE_FUNCTION_RETRY_*
 * change the waits). Pure and import-free: the request's workflow computes its waits with it.
 */

export interface SourceFunctionRetry {
  retries: number;
  initialMs: number;
  maximumMs: number;
}

/** Segment retries a source function's request up to six times. */
export const SOURCE_FUNCTION_RETRIES = 6;

/**
 * The wait before retry `attempt` (0 for the first): between half and one and a half times the
 * initial wait (1–3 minutes by default), doubling each time, at most the maximum. `random` in
 * [0, 1): the workflow's own (deterministic on replay).
 */
export function retryDelayMs(retry: SourceFunctionRetry, attempt: number, random: number): number {
  const base = Math.min(retry.maximumMs, retry.initialMs * 2 ** attempt);
  return Math.min(retry.maximumMs, Math.max(1, Math.round(base * (0.5 + random))));
}
