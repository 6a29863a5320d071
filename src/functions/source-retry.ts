/**
 * Segment's retries of a source function's request: a RetryError or a timeout is tried again up to
 * six times, the first wait 1–3 minutes, growing, at most 20 minutes apart (SOURCE_FUNCTION_RETRY_*
 * change the waits); anything else fails the request. Pure and import-free: the request's workflow
 * computes its waits with it, its activity the disposition of an error.
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

/**
 * What a run that threw comes to: a RetryError or a timeout is retried unless this was the last
 * try; anything else fails the request at once. The reason is the disposition's word (the same words
 * as a destination function's) and the error's class, never its message (user data).
 */
export function sourceDisposition(errorType: string, final: boolean): { kind: 'retry' | 'failed'; reason: string } {
  const word =
    errorType === 'RetryError'
      ? 'function:retry'
      : errorType === 'Timeout'
        ? 'function:timeout'
        : errorType === 'InvalidEventPayload' || errorType === 'ValidationError'
          ? 'function:rejected'
          : errorType === 'EventNotSupported'
            ? 'function:unsupported'
            : 'function:error';
  const reason = `${word}: ${errorType}`;
  const retryable = errorType === 'RetryError' || errorType === 'Timeout';
  if (retryable && !final) return { kind: 'retry', reason };
  return { kind: 'failed', reason: retryable ? `${reason} (retries exhausted)` : reason };
}
