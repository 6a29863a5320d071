import { createHmac, timingSafeEqual } from 'node:crypto';

/** Seed, Authentication: lowercase hex HMAC-SHA1 of the exact UTF-8 body, keyed by the shared secret. */
export function signBody(secret: string, body: string): string {
  return createHmac('sha1', secret).update(body, 'utf8').digest('hex');
}

/** The receiver's side of the recipe, as documented in docs/api.md. */
export function verifySignature(secret: string, body: string, signature: string): boolean {
  const expected = Buffer.from(signBody(secret, body), 'utf8');
  const given = Buffer.from(signature, 'utf8');
  return expected.length === given.length && timingSafeEqual(expected, given);
}
