/**
 * Why a message was not delivered. Every failure the client reports is an `AnalyticsError` whose
 * `code` the caller can branch on; the message is written for a person reading a log.
 */
export type AnalyticsErrorCode =
  /** The call broke a rule (a required field, a type); `field` names it. Nothing was queued. */
  | 'invalid_message'
  /** The message is over 32 KB once encoded; `size` holds its size in bytes. Nothing was queued. */
  | 'message_too_large'
  /** The queue already holds `maxQueueSize` messages (overflow policy: the new message is refused). */
  | 'queue_full'
  /** The call came after `close()`. Nothing was queued. */
  | 'client_closed'
  /** The server refused the batch with a status that will not change on retry (4xx other than 408/429). */
  | 'rejected'
  /** Every attempt failed with a retryable outcome (network error, timeout, 408, 429, 5xx). */
  | 'retries_exhausted'
  /** `close({ timeout })` ran out of time before the message was acknowledged. */
  | 'close_timeout';

export interface AnalyticsErrorDetails {
  /** The message field that broke a rule (`invalid_message`). */
  field?: string;
  /** Encoded size in bytes (`message_too_large`). */
  size?: number;
  /** HTTP status of the last answer, when there was one (`rejected`, `retries_exhausted`). */
  status?: number;
  /** Number of HTTP attempts made for the batch. */
  attempts?: number;
  /** The network or timeout error behind the last attempt. */
  cause?: unknown;
}

export class AnalyticsError extends Error {
  override readonly name = 'AnalyticsError';
  readonly field?: string;
  readonly size?: number;
  readonly status?: number;
  readonly attempts?: number;

  constructor(
    readonly code: AnalyticsErrorCode,
    message: string,
    details: AnalyticsErrorDetails = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.field = details.field;
    this.size = details.size;
    this.status = details.status;
    this.attempts = details.attempts;
  }
}

export const invalidMessage = (field: string, rule: string) =>
  new AnalyticsError('invalid_message', `${field}: ${rule}`, { field });
