import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Config } from '../../config';
import { limitedAddress } from '../client-address';
import { ApiError } from '../errors';
import { failureLimiter } from '../rate-limiter';

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

/** Wrong admin tokens counted per client address, and the refusal of an address that has had its share. */
export interface AdminTokenFailures {
  refuseIfSpent(request: FastifyRequest): Promise<void>;
  count(request: FastifyRequest): Promise<void>;
}

const uncounted: AdminTokenFailures = { refuseIfSpent: async () => undefined, count: async () => undefined };

/**
 * ADMIN_TOKEN_FAILURE_LIMIT per ADMIN_TOKEN_FAILURE_WINDOW, per client address as TRUST_PROXY makes
 * it out. The API makes one and hands it to every route the token opens (admin, portal, codec), so
 * guesses count together wherever they are made.
 */
export function adminTokenFailures(config: Pick<Config, 'adminTokenFailureLimit' | 'adminTokenFailureWindow' | 'trustProxy'>): AdminTokenFailures {
  const perAddress = failureLimiter(config.adminTokenFailureLimit, config.adminTokenFailureWindow, 'wrong admin tokens from this address');
  return {
    refuseIfSpent: (request) => perAddress.refuseIfSpent(limitedAddress(request, config.trustProxy)),
    count: (request) => perAddress.count(limitedAddress(request, config.trustProxy)),
  };
}

/**
 * The admin API's onRequest hook: `Authorization: Bearer <ADMIN_TOKEN>`. Messages never repeat
 * what was presented. An empty configured token locks the admin API rather than opening it. An
 * address past its share of wrong tokens gets 429 before its token is compared, right or wrong;
 * a request presenting no token is no guess and is not counted.
 */
export function requireAdminToken(adminToken: string, failures: AdminTokenFailures = uncounted) {
  const expected = digest(adminToken);
  return async function checkAdminToken(request: FastifyRequest): Promise<void> {
    if (!adminToken) throw denied('the admin API is disabled: ADMIN_TOKEN is not set');
    const presented = bearerToken(request.headers.authorization);
    if (presented === undefined) throw denied('Authorization: a "Bearer <admin token>" header is required');
    await failures.refuseIfSpent(request);
    if (!timingSafeEqual(digest(presented), expected)) {
      await failures.count(request);
      throw denied('Authorization: the admin token is not valid');
    }
  };
}
