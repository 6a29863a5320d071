import { createPrivateKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A signing key of the test's own and its JWKS served over local HTTP: what Temporal's server
 * (global.authorization.jwtKeyProvider) fetches to check API keys, as Temporal Cloud checks its own.
 */
export interface JwtIssuer {
  /** `http://127.0.0.1:<port>/jwks.json` */
  jwksUrl: string;
  /** A JWT (RS256) with `sub` and the `permissions` claim Temporal's default claim mapper reads, e.g. ["temporal-system:admin"]. */
  token(permissions: string[], subject?: string): string;
  close(): Promise<void>;
}

const base64url = (data: Buffer | string) => Buffer.from(data).toString('base64url');

/** A JWT signed with `privateKey` under `kid`: valid for an hour. */
export function signJwt(privateKey: KeyObject, kid: string, claims: Record<string, unknown>): string {
  const now = Math.floor(Date.now() / 1000);
  const header = base64url(JSON.stringify({ alg: 'RS256', typ: 'JWT', kid }));
  const payload = base64url(JSON.stringify({ iat: now, exp: now + 3_600, ...claims }));
  const signature = sign('sha256', Buffer.from(`${header}.${payload}`), privateKey);
  return `${header}.${payload}.${base64url(signature)}`;
}

export function generateSigningKey(): KeyObject {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return createPrivateKey(privateKey.export({ format: 'pem', type: 'pkcs8' }));
}

export async function startJwtIssuer(kid = 'switchyard-test'): Promise<JwtIssuer> {
  const privateKey = generateSigningKey();
  const jwk = { ...privateKeyToPublicJwk(privateKey), kid, alg: 'RS256', use: 'sig' };
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    jwksUrl: `http://127.0.0.1:${port}/jwks.json`,
    token: (permissions, subject = 'switchyard-test') => signJwt(privateKey, kid, { sub: subject, permissions }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function privateKeyToPublicJwk(privateKey: KeyObject): Record<string, unknown> {
  const { kty, n, e } = privateKey.export({ format: 'jwk' });
  return { kty, n, e };
}
