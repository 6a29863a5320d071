import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Config } from '../../config';
import { BOOTSTRAP_ACTOR, lastUsedIsStale, tokenState, type Actor } from '../../access/scopes';
import { TOKEN_PREFIX } from '../../store/admin-tokens';
import type { Store } from '../../store/types';
import { limitedAddress } from '../client-address';
import { ApiError } from '../errors';
import { failureLimiter } from '../rate-limiter';

const CHALLENGE = { 'www-authenticate': 'Bearer realm="switchyard-admin"' };

const denied = (message: string) => new ApiError(401, 'unauthorized', message, CHALLENGE);

/**
 * A request that presented no credentials at all: no guess, nobody to hold to account. Told apart
 * from a wrong token so that it writes no audit row: anyone on the internet can
 * send it at any rate, and an append-only table must not be theirs to fill.
 */
export class NoCredentials extends ApiError {
  constructor() {
    super(401, 'unauthorized', 'Authorization: a "Bearer <admin token>" header is required', CHALLENGE);
  }
}

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

export interface AuthenticateOptions {
  /** ADMIN_TOKEN: the bootstrap token, with every scope; empty: none. */
  adminToken: string;
  tokens: Pick<Store['tokens'], 'findBySecret' | 'touch'>;
  failures?: AdminTokenFailures;
  clock?: () => number;
}

/**
 * Who presented `Authorization: Bearer <token>`: the bootstrap ADMIN_TOKEN, or an unrevoked,
 * unexpired `swy_` token, looked up by its hash on every request, so a revocation holds
 * on every API process from its commit on. Messages never repeat what was presented. An address
 * past its share of wrong tokens gets 429 before its token is compared, right or wrong, or looked
 * at; a request presenting no token is no guess and is not counted (NoCredentials).
 */
export function adminAuthentication({ adminToken, tokens, failures = uncounted, clock = Date.now }: AuthenticateOptions) {
  const expected = digest(adminToken);
  /** When this process last wrote each token's lastUsedAt: at most once a minute, not once a request. */
  const lastWritten = new Map<string, number>();
  return async function authenticate(request: FastifyRequest): Promise<Actor> {
    // An address past its share is refused first, credentials or none: nothing it sends is recorded.
    await failures.refuseIfSpent(request);
    const presented = bearerToken(request.headers.authorization);
    if (presented === undefined) throw new NoCredentials();
    const token = presented.startsWith(TOKEN_PREFIX) ? await tokens.findBySecret(presented) : undefined;
    if (token) {
      const now = clock();
      if (tokenState(token.expiresAt, now) === 'expired') throw denied(`Authorization: the admin token ${token.id} expired at ${token.expiresAt}`);
      if (lastUsedIsStale(lastWritten.get(token.id), now)) {
        lastWritten.set(token.id, now);
        await tokens.touch(token.id, new Date(now).toISOString());
      }
      return { tokenId: token.id, name: token.name, scopes: token.scopes };
    }
    // Compared even for a swy_ token not found: an ADMIN_TOKEN may happen to start with the prefix.
    if (adminToken && timingSafeEqual(digest(presented), expected)) return BOOTSTRAP_ACTOR;
    await failures.count(request);
    throw denied(presented.startsWith(TOKEN_PREFIX) ? 'Authorization: the admin token is not valid (unknown or revoked)' : 'Authorization: the admin token is not valid');
  };
}
