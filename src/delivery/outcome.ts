import type { DeliveryDirective } from './delivery-directive';
import { EGRESS_REFUSED } from './egress';
import type { AttemptOutcome } from './types';

/**
 * Issue rules: 2xx succeeds; 5xx, 408 and 429 can succeed later; 3xx (redirects are never
 * followed) and every other 4xx will not, so that URL is given up for this message.
 */
export function classifyResponse(status: number, retryAfterMs?: number, directive?: DeliveryDirective): AttemptOutcome {
  // The receiver's `webhook-delivery` header outranks its status: `disable` switches the URL off
  // (an accepted message stays delivered), `abort-message` gives this message up on this URL.
  if (directive === 'disable') {
    const reason = `HTTP ${status} with webhook-delivery: disable: the webhook URL is switched off`;
    return status >= 200 && status < 300 ? { kind: 'success', status, disablesWebhook: true } : { kind: 'permanent', status, reason, disablesWebhook: true };
  }
  if (status >= 200 && status < 300) return { kind: 'success', status };
  if (directive === 'abort-message') return { kind: 'permanent', status, reason: `HTTP ${status} with webhook-delivery: abort-message: the receiver asked not to retry this message` };
  // Standard Webhooks: 410 means the webhook is gone for good, so the URL is switched off.
  if (status === 410) return { kind: 'permanent', status, reason: 'HTTP 410 Gone: the webhook URL is switched off', disablesWebhook: true };
  if (status >= 500 || status === 408 || status === 429) {
    return { kind: 'retry', status, reason: `HTTP ${status}`, ...(retryAfterMs !== undefined && { retryAfterMs }) };
  }
  if (status >= 300 && status < 400) return { kind: 'permanent', status, reason: `HTTP ${status}: redirects are not followed` };
  return { kind: 'permanent', status, reason: `HTTP ${status}` };
}

/** Certificate problems will not fix themselves between retries (seed: self-signed certificates are refused). */
const TLS_CERT_ERRORS = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

const TIMEOUT_ERRORS = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'ABORT_ERR', 'TimeoutError']);

/**
 * Errors building the request itself (undici refuses a header value or the URL): Switchyard's own
 * request would be refused the same way on every retry, so nothing is ever sent.
 */
const REQUEST_BUILD_ERRORS = new Set(['UND_ERR_INVALID_ARG', 'ERR_INVALID_URL', 'ERR_INVALID_CHAR', 'ERR_INVALID_HTTP_TOKEN']);

/** Errors raised before a status arrived. `code` is the Node/undici error code; `refusal` a policy refusal (e.g. egress). */
export function classifyError(code: string | undefined, message: string, timeoutMs: number): AttemptOutcome {
  // The address a URL points at is a setting, not a passing fault: retrying would only knock again.
  if (code === EGRESS_REFUSED) return { kind: 'permanent', reason: message };
  if (code && TLS_CERT_ERRORS.has(code)) {
    return { kind: 'permanent', reason: `TLS certificate rejected (${code}); no request was sent` };
  }
  if (code && REQUEST_BUILD_ERRORS.has(code)) {
    return { kind: 'permanent', reason: `request could not be built (${code}: ${message}); no request was sent` };
  }
  if (code && TIMEOUT_ERRORS.has(code)) {
    return { kind: 'retry', reason: `timeout: no response within ${timeoutMs}ms` };
  }
  return { kind: 'retry', reason: code ? `${code}: ${message}` : message };
}
