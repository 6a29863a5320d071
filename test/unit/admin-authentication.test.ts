import type { FastifyRequest } from 'fastify';
import { BOOTSTRAP_ACTOR, LAST_USED_RESOLUTION_MS } from '../../src/access/scopes';
import { adminAuthentication } from '../../src/api/admin/auth';
import { ApiError } from '../../src/api/errors';
import type { AdminToken } from '../../src/store/types';

/** Who a Bearer token is, over an in-memory token table and a clock the test moves. */
const BOOTSTRAP = 'bootstrap-admin-token-0123456789abcdef';
const NOW = Date.parse('2026-11-28T01:00:00.000Z');
const token = (id: string, expiresAt: string | null = null): AdminToken => ({ id, name: id, scopes: ['read'], createdAt: '2026-11-01T00:00:00.000Z', expiresAt, lastUsedAt: null, revokedAt: null });
const TABLE: Record<string, AdminToken> = { swy_reader: token('tok_reader'), swy_expired: token('tok_expired', '2026-11-28T00:59:59.999Z'), swy_later: token('tok_later', '2026-11-28T01:00:00.001Z') };

function authentication(adminToken = BOOTSTRAP) {
  let now = NOW;
  const touched: string[] = [];
  const authenticate = adminAuthentication({
    adminToken,
    tokens: { findBySecret: async (secret) => TABLE[secret], touch: async (id) => void touched.push(id) },
    clock: () => now,
  });
  const as = (bearer: string | undefined) => authenticate({ headers: bearer === undefined ? {} : { authorization: `Bearer ${bearer}` } } as FastifyRequest);
  return { as, touched, advance: (ms: number) => (now += ms) };
}

const refusal = async (promise: Promise<unknown>) => {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  return err instanceof ApiError ? `${err.statusCode} ${err.message}` : err;
};

it.each([
  [undefined, '401 Authorization: a "Bearer <admin token>" header is required'],
  ['wrong', '401 Authorization: the admin token is not valid'],
  ['swy_unknown', '401 Authorization: the admin token is not valid (unknown or revoked)'],
  ['swy_expired', '401 Authorization: the admin token tok_expired expired at 2026-11-28T00:59:59.999Z'],
])('refuses %s: %s', async (bearer, message) => expect(await refusal(authentication().as(bearer))).toBe(message));

it('knows the bootstrap token and a stored one, by name and scopes', async () => {
  const { as } = authentication();
  await expect(as(BOOTSTRAP)).resolves.toBe(BOOTSTRAP_ACTOR);
  await expect(as('swy_reader')).resolves.toEqual({ tokenId: 'tok_reader', name: 'tok_reader', scopes: ['read'] });
  await expect(as('swy_later')).resolves.toMatchObject({ tokenId: 'tok_later' });
});

it('opens an ADMIN_TOKEN that happens to start with swy_ as the bootstrap token', async () => {
  await expect(authentication('swy_bootstrap-0123456789abcdef0123456789').as('swy_bootstrap-0123456789abcdef0123456789')).resolves.toBe(BOOTSTRAP_ACTOR);
});

it('refuses everything but swy_ tokens without an ADMIN_TOKEN', async () => {
  const { as } = authentication('');
  expect(await refusal(as(''))).toBe('401 Authorization: a "Bearer <admin token>" header is required');
  expect(await refusal(as('anything'))).toBe('401 Authorization: the admin token is not valid');
  await expect(as('swy_reader')).resolves.toMatchObject({ tokenId: 'tok_reader' });
});

it('writes lastUsedAt at most once a minute per token', async () => {
  const { as, touched, advance } = authentication();
  await as('swy_reader');
  await as('swy_reader');
  advance(LAST_USED_RESOLUTION_MS - 1);
  await as('swy_reader');
  expect(touched).toEqual(['tok_reader']);
  advance(1);
  await as('swy_reader');
  expect(touched).toEqual(['tok_reader', 'tok_reader']);
});
