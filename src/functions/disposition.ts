import type { FunctionError } from './types';

/**
 * What one run of a destination (or insert) function comes to, on Switchyard's delivery rules, from
 * Segment's dispositions: a RetryError or a timeout is retried within the message's retry window
 * with the usual backoff; EventNotSupported (a missing handler included) skips the destination;
 * InvalidEventPayload and ValidationError fail it without a retry; DropEvent filters the message
 * out on purpose; any other throw fails it. Each carries its reason word (`function:…`), which
 * delivery detail, the overview and `/metrics` show. Pure: the attempt activity applies it.
 */

export type FunctionDisposition =
  | { kind: 'delivered' }
  | { kind: 'retry'; reason: string; word: FunctionReason }
  | { kind: 'failed'; reason: string; word: FunctionReason }
  /** Skipped (`function:unsupported`) or filtered (`function:dropped`): the destination stops here, not failed. */
  | { kind: 'stopped'; reason: string; word: FunctionReason };

export const FUNCTION_REASONS = {
  retry: 'function:retry',
  timeout: 'function:timeout',
  unsupported: 'function:unsupported',
  rejected: 'function:rejected',
  error: 'function:error',
  dropped: 'function:dropped',
} as const;
/** The reason word alone: a metric label (a bounded set, no message text). */
export type FunctionReason = (typeof FUNCTION_REASONS)[keyof typeof FUNCTION_REASONS];

/**
 * The reason: its word and the error's type. The error's message is not in it: a function writes
 * it from the event (user data), so it is kept sealed beside the attempt's console output, and the
 * reason (which workflow history holds in the clear) names only what happened.
 */
const said = (word: FunctionReason, error: FunctionError) => ({ reason: `${word}: ${error.type}`, word });

export function functionDisposition(error: FunctionError | undefined): FunctionDisposition {
  if (!error) return { kind: 'delivered' };
  switch (error.type) {
    case 'RetryError':
      return { kind: 'retry', ...said(FUNCTION_REASONS.retry, error) };
    case 'Timeout':
      return { kind: 'retry', ...said(FUNCTION_REASONS.timeout, error) };
    case 'EventNotSupported':
      return { kind: 'stopped', ...said(FUNCTION_REASONS.unsupported, error) };
    case 'InvalidEventPayload':
    case 'ValidationError':
      return { kind: 'failed', ...said(FUNCTION_REASONS.rejected, error) };
    case 'DropEvent':
      return { kind: 'stopped', ...said(FUNCTION_REASONS.dropped, error) };
    default:
      return { kind: 'failed', ...said(FUNCTION_REASONS.error, error) };
  }
}
