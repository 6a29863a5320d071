import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../errors';

const CHALLENGE = { 'www-authenticate': 'Bearer realm="switchyard-admin"' };

const denied = (message: string) => new ApiError(401, 'unauthorized', message, CHALLENGE);

/**
 * Comparing digests rather than the strings keeps the comparison constant-time whatever the
 * length of what was presented (timingSafeEqual needs equal lengths, and a length check would leak).
 */
const digest = (token: string) => createHash('sha256').update(token, 'utf8').digest();

function bearerToken(authorization: string | undefined): string | undefined {
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? '');
  return match?.[1];
}

/**
 * The admin API's onRequest hook: `Authorization: Bearer <ADMIN_TOKEN>`. Messages never repeat
 * what was presented. An empty configured token locks the admin API rather than opening it.
 */
export function requireAdminToken(adminToken: string) {
  const expected = digest(adminToken);
  return async function checkAdminToken(request: FastifyRequest): Promise<void> {
    if (!adminToken) throw denied('the admin API is disabled: ADMIN_TOKEN is not set');
    const presented = bearerToken(request.headers.authorization);
    if (presented === undefined) throw denied('Authorization: a "Bearer <admin token>" header is required');
    if (!timingSafeEqual(digest(presented), expected)) throw denied('Authorization: the admin token is not valid');
  };
}
