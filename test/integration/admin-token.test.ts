import { ADMIN_TOKEN, startSystem, type TestSystem } from '../helpers/system';

/** Wrong admin tokens count per client address; past a burst every token from it waits, on every route the token opens. */
const FAILURES = 3;
const WINDOW_MS = 1_500;

let system: TestSystem;
beforeAll(async () => {
  system = await startSystem({ adminTokenFailureLimit: FAILURES, adminTokenFailureWindow: WINDOW_MS });
});
afterAll(async () => {
  await system.close();
});

const WRONG = 'not-the-admin-token-0123456789abcdef';
const call = (url: string, remoteAddress: string, token: string | undefined, method: 'GET' | 'POST' = 'GET') =>
  system.app.inject({
    method,
    url,
    remoteAddress,
    headers: { ...(token !== undefined && { authorization: `Bearer ${token}` }), ...(method === 'POST' && { 'content-type': 'application/json' }) },
    ...(method === 'POST' && { payload: JSON.stringify({ payloads: [] }) }),
  });

it('answers 429 with Retry-After after a burst of wrong tokens from one address, to any token on any admin route, while other addresses carry on', async () => {
  const attacker = '198.51.100.20';
  for (let i = 0; i < FAILURES; i++) expect((await call('/admin/sources', attacker, WRONG)).statusCode).toBe(401);

  const limited = await call('/admin/sources', attacker, WRONG);
  expect(limited.statusCode).toBe(429);
  expect(limited.json()).toEqual({ code: 'rate_limited', message: expect.stringMatching(/^too many wrong admin tokens from this address \(at most 3 per 1500ms\); retry in \d+ seconds?$/) });
  const retryAfter = Number(limited.headers['retry-after']);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(Math.ceil(WINDOW_MS / 1000));
  expect(limited.body).not.toContain(WRONG);

  // Refused before the comparison: the right token from that address waits too, on the admin API, the portal's login and the codec server.
  expect((await call('/admin/sources', attacker, ADMIN_TOKEN)).statusCode).toBe(429);
  expect((await call('/portal/settings.json', attacker, ADMIN_TOKEN)).statusCode).toBe(429);
  expect((await call('/codec/decode', attacker, ADMIN_TOKEN, 'POST')).statusCode).toBe(429);
  expect((await call('/admin/sources', '198.51.100.21', ADMIN_TOKEN)).statusCode).toBe(200);

  await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000 + 100));
  expect((await call('/admin/sources', attacker, ADMIN_TOKEN)).statusCode).toBe(200);
});

it('counts wrong tokens from every route the token opens together', async () => {
  const attacker = '198.51.100.30';
  expect((await call('/admin/sources', attacker, WRONG)).statusCode).toBe(401);
  expect((await call('/portal/settings.json', attacker, WRONG)).statusCode).toBe(401);
  expect((await call('/codec/decode', attacker, WRONG, 'POST')).statusCode).toBe(401);
  expect((await call('/admin/sources', attacker, WRONG)).statusCode).toBe(429);
});

it('does not count a request that presents no token (a page before its login is no guess)', async () => {
  const visitor = '198.51.100.40';
  for (let i = 0; i < 2 * FAILURES; i++) expect((await call('/admin/sources', visitor, undefined)).statusCode).toBe(401);
  expect((await call('/admin/sources', visitor, ADMIN_TOKEN)).statusCode).toBe(200);
});
