import type { OutboundAuth } from '../mappings/types';

/**
 * Pure decisions of outbound authentication: the Authorization header of the static
 * kinds, the OAuth2 client-credentials token request, and how long a token is reused.
 */

/** `Bearer …` or `Basic …` (RFC 7617: base64 of `username:password`); undefined for OAuth2 (a token is fetched). */
export function staticAuthorization(auth: OutboundAuth | null): string | undefined {
  if (auth?.type === 'bearer') return `Bearer ${auth.token}`;
  if (auth?.type === 'basic') return `Basic ${Buffer.from(`${auth.username}:${auth.password}`, 'utf8').toString('base64')}`;
  return undefined;
}

/** A token is given up this long before it expires, so a request never carries one that expires on the way. */
export const TOKEN_EXPIRY_MARGIN_MS = 30_000;
/** A token response without `expires_in` (RFC 6749 makes it optional): reused this long. */
export const DEFAULT_TOKEN_LIFETIME_MS = 5 * 60_000;

/** How long after it arrived a token is reused: until shortly before `expires_in` (half of it when that is short). */
export function tokenReuseMs(expiresInSeconds: unknown): number {
  const lifetimeMs = typeof expiresInSeconds === 'number' && Number.isFinite(expiresInSeconds) && expiresInSeconds > 0 ? expiresInSeconds * 1000 : DEFAULT_TOKEN_LIFETIME_MS;
  return Math.max(0, lifetimeMs - Math.min(TOKEN_EXPIRY_MARGIN_MS, lifetimeMs / 2));
}

/** RFC 6749 §4.4 client credentials, the client authenticated in the body (client_secret_post). */
export function tokenRequestBody(auth: Extract<OutboundAuth, { type: 'oauth2' }>): string {
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: auth.clientId, client_secret: auth.clientSecret });
  if (auth.scope) form.set('scope', auth.scope);
  if (auth.audience) form.set('audience', auth.audience);
  return form.toString();
}

/** The access token of a token endpoint's JSON answer, or why there is none (never the answer itself: it may carry secrets). */
export function accessTokenOf(status: number, body: string): { token: string; expiresIn: unknown } | { reason: string } {
  if (status < 200 || status >= 300) return { reason: `HTTP ${status}` };
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { reason: 'the answer is not JSON' };
  }
  const token = (parsed as { access_token?: unknown } | null)?.access_token;
  if (typeof token !== 'string' || token === '') return { reason: 'the answer has no access_token' };
  return { token, expiresIn: (parsed as { expires_in?: unknown }).expires_in };
}
