import { createHash, createHmac } from 'node:crypto';

/**
 * Standard Webhooks (standardwebhooks.com) signing, optional per destination and sent alongside
 * the seed's X-Signature: `webhook-id`, `webhook-timestamp` (Unix seconds) and
 * `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, one entry per active secret.
 */

const SECRET_PREFIX = 'whsec_';
const MIN_KEY_BYTES = 24;
const MAX_KEY_BYTES = 64;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** A secret is `whsec_` and the base64 of 24 to 64 random bytes (the spec's format). Returns the broken rule, if any. */
export function signingSecretRule(secret: string): string | undefined {
  if (!secret.startsWith(SECRET_PREFIX)) return `must start with ${SECRET_PREFIX} (Standard Webhooks secret format)`;
  const encoded = secret.slice(SECRET_PREFIX.length);
  if (!BASE64.test(encoded) || encoded.length % 4 !== 0) return `must be ${SECRET_PREFIX} followed by base64`;
  const bytes = Buffer.from(encoded, 'base64').length;
  if (bytes < MIN_KEY_BYTES || bytes > MAX_KEY_BYTES) return `must carry ${MIN_KEY_BYTES} to ${MAX_KEY_BYTES} bytes of key (base64), not ${bytes}`;
  return undefined;
}

function signingKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

/** Visible ASCII without spaces: what a header value and the `id.timestamp.body` recipe take as they are. */
const HEADER_SAFE_ID = /^[\x21-\x7e]{1,200}$/;

/**
 * `webhook-id`: the messageId, the same on every retry, so receivers can deduplicate with either.
 * A messageId that could not travel in a header (control characters, spaces, non-ASCII) is
 * replaced by a stable digest of it.
 */
export function standardWebhookId(messageId: string): string {
  if (HEADER_SAFE_ID.test(messageId)) return messageId;
  return `msg_${createHash('sha256').update(messageId, 'utf8').digest('base64url').slice(0, 32)}`;
}

export function signStandardWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  return createHmac('sha256', signingKey(secret)).update(`${id}.${timestampSeconds}.${body}`, 'utf8').digest('base64');
}

export function standardWebhookHeaders(secrets: string[], id: string, timestampSeconds: number, body: string): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((secret) => `v1,${signStandardWebhook(secret, id, timestampSeconds, body)}`).join(' '),
  };
}

/** The secrets that sign a request sent at `nowMs`: the current one, and the previous one while its overlap lasts. */
export function activeSigningSecrets(signing: { current: string; previous?: { secret: string; until: string } } | null, nowMs: number): string[] {
  if (!signing) return [];
  const previous = signing.previous && Date.parse(signing.previous.until) > nowMs ? [signing.previous.secret] : [];
  return [signing.current, ...previous];
}
