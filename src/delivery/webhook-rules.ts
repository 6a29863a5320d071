import { MAX_HEADERS, MAX_WEBHOOKS } from './limits';
import { HEADERS_SET_BY_SWITCHYARD } from './request';

/**
 * The seed's rules for a destination's webhook list, as pure decisions. The route schemas carry
 * the same limits (so they show in the API doc); these checks cover what JSON Schema cannot say
 * well, and hold for any caller, not only HTTP (the admin API is one).
 */

/** Seed limits (delivery/limits.ts, which the workflow imports too). */
export { MAX_HEADERS, MAX_WEBHOOKS };

export const TOO_MANY_WEBHOOKS = `at most ${MAX_WEBHOOKS} webhook URLs per destination`;
export const TOO_MANY_HEADERS = `at most ${MAX_HEADERS} static headers per webhook`;


/** Connection-level headers undici refuses to send, so a webhook carrying one could never be delivered. */
const SET_BY_HTTP_CLIENT = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'expect', 'te', 'trailer']);

/** RFC 9110 `token`: what a header name may be made of. */
const HTTP_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** Characters the WHATWG parser would silently strip or that cannot appear in a request line. */
const WHITESPACE_OR_CONTROL = /[\s\u0000-\u001f\u007f]/;

export interface WebhookInput {
  url: string;
  headers?: Record<string, string>;
}

/** Where a request breaks a rule: `field` as the API client wrote it, `rule` in words. */
export interface RuleViolation {
  field: string;
  rule: string;
}

export const violationMessage = ({ field, rule }: RuleViolation) => `${field}: ${rule}`;

/** Seed: "Full URL including the http or https scheme". Returns the broken rule, if any. */
export function webhookUrlRule(url: string): string | undefined {
  if (WHITESPACE_OR_CONTROL.test(url)) return 'must not contain spaces or control characters';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be a full URL including the http or https scheme';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return `must use the http or https scheme, not ${parsed.protocol.slice(0, -1)}`;
  }
  // Credentials in a URL end up in logs and the UI; a static Authorization header is the place for them.
  if (parsed.username || parsed.password) return 'must not embed credentials (user:password@); use a static header instead';
  return undefined;
}

export function headerNameRule(name: string): string | undefined {
  if (!HTTP_TOKEN.test(name)) return `${JSON.stringify(name)} is not a valid HTTP header name`;
  const lower = name.toLowerCase();
  if (HEADERS_SET_BY_SWITCHYARD.has(lower)) return `"${name}" is set by Switchyard and cannot be overridden`;
  if (SET_BY_HTTP_CLIENT.has(lower)) return `"${name}" is managed by the HTTP connection and cannot be set`;
  return undefined;
}

/**
 * RFC 9110 field value: visible ASCII, space, tab and obs-text (U+0080–U+00FF, sent as Latin-1
 * bytes) — exactly what undici sends; it throws on anything else (`tök€n`), and that webhook could
 * never be delivered. Checked at configuration so it is a 400, not hours of failed attempts.
 */
const NOT_A_FIELD_VALUE = /[^\t\x20-\x7e\x80-\xff]/;

/** A CR or LF in a value would let a header split the request; the value itself is never echoed. */
export function headerValueRule(value: string): string | undefined {
  if (/[\r\n\u0000]/.test(value)) return 'must not contain CR, LF or NUL characters';
  if (NOT_A_FIELD_VALUE.test(value)) return 'must be a valid HTTP field value: visible ASCII, spaces, tabs or Latin-1 characters (RFC 9110)';
  return undefined;
}

function headersViolation(headers: Record<string, string>, field: string): RuleViolation | undefined {
  const names = Object.keys(headers);
  if (names.length > MAX_HEADERS) return { field, rule: TOO_MANY_HEADERS };
  const seen = new Set<string>();
  for (const name of names) {
    const nameRule = headerNameRule(name);
    if (nameRule) return { field, rule: nameRule };
    if (seen.has(name.toLowerCase())) return { field, rule: `"${name}" is given twice (header names are case-insensitive)` };
    seen.add(name.toLowerCase());
    const valueRule = headerValueRule(headers[name]);
    if (valueRule) return { field: `${field}.${name}`, rule: valueRule };
  }
  return undefined;
}

/** The first rule the webhook list breaks, in the order a person would fix them. */
export function findWebhookViolation(webhooks: WebhookInput[]): RuleViolation | undefined {
  if (webhooks.length > MAX_WEBHOOKS) return { field: 'webhooks', rule: TOO_MANY_WEBHOOKS };
  for (const [i, webhook] of webhooks.entries()) {
    const urlRule = webhookUrlRule(webhook.url);
    if (urlRule) return { field: `webhooks[${i}].url`, rule: urlRule };
    const headers = headersViolation(webhook.headers ?? {}, `webhooks[${i}].headers`);
    if (headers) return headers;
  }
  return undefined;
}
