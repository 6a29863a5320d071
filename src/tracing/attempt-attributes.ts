import type { Attributes } from '@opentelemetry/api';
import { ATTR_ERROR_TYPE, ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_URL_FULL, ERROR_TYPE_VALUE_OTHER } from '@opentelemetry/semantic-conventions';
import { webhookLabel } from '../delivery/summary';
import type { AttemptOutcome } from '../delivery/types';

/** The span of one request to one webhook URL (one attempt), short-lived: none stays open across a retry wait. */
export const ATTEMPT_SPAN = 'webhook.attempt';

/** Switchyard's own attributes, under its namespace (OpenTelemetry's naming rules: `<company>.<name>`). */
export const ATTEMPT_ATTRIBUTES = {
  messageId: 'switchyard.message_id',
  destinationId: 'switchyard.destination_id',
  webhookIndex: 'switchyard.webhook_index',
  mapping: 'switchyard.mapping',
  attempt: 'switchyard.attempt',
} as const;

export interface AttemptSubject {
  messageId: string;
  destinationId: string;
  webhookIndex: number;
  mapping?: string;
  /** The round of the delivery's retries this attempt belongs to (1 for the first). */
  round: number;
  method: string;
  url: string;
}

/**
 * What an attempt's span says before the request goes out. `url.full` is the URL as the Web UI's
 * summaries show it (summary.ts webhookLabel): no credentials, query, fragment or token-like path
 * segment, since span attributes reach whoever runs the collector. An actions destination's
 * request names its mapping instead of an index (its index is always 0).
 */
export function attemptAttributes(subject: AttemptSubject): Attributes {
  return {
    [ATTEMPT_ATTRIBUTES.messageId]: subject.messageId,
    [ATTEMPT_ATTRIBUTES.destinationId]: subject.destinationId,
    ...(subject.mapping === undefined ? { [ATTEMPT_ATTRIBUTES.webhookIndex]: subject.webhookIndex } : { [ATTEMPT_ATTRIBUTES.mapping]: subject.mapping }),
    [ATTEMPT_ATTRIBUTES.attempt]: subject.round,
    [ATTR_HTTP_REQUEST_METHOD]: subject.method,
    [ATTR_URL_FULL]: webhookLabel(subject.url),
  };
}

/** An error code at the start of a reason (`ECONNREFUSED: connect …`) or in its parentheses (`TLS certificate rejected (CERT_HAS_EXPIRED)`). */
const LEADING_CODE = /^([A-Z][A-Z0-9_]{2,63}):/;
const QUOTED_CODE = /\(([A-Z][A-Z0-9_]{2,63})[):]/;

/**
 * What an attempt's answer adds to its span: the status when one came, and on failure a
 * low-cardinality `error.type` (semantic conventions: the status code as text, else the error's
 * code, `timeout`, or `_OTHER`), never the reason's free text, which may quote a receiver.
 */
export function outcomeAttributes(outcome: AttemptOutcome): Attributes {
  const status = outcome.status;
  const attributes: Attributes = status === undefined ? {} : { [ATTR_HTTP_RESPONSE_STATUS_CODE]: status };
  if (outcome.kind === 'success') return attributes;
  return { ...attributes, [ATTR_ERROR_TYPE]: errorType(outcome.reason, status) };
}

export function errorType(reason: string, status?: number): string {
  if (status !== undefined) return String(status);
  if (reason.startsWith('timeout')) return 'timeout';
  return LEADING_CODE.exec(reason)?.[1] ?? QUOTED_CODE.exec(reason)?.[1] ?? ERROR_TYPE_VALUE_OTHER;
}
