import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { faultDir, startOwnApi, stopProcess, type OwnApi } from '../helpers/faults';
import { createTestDatabase } from '../helpers/postgres';
import { waitFor } from '../helpers/processes';
import { ADMIN_TOKEN, basicAuth, startSystem, type TestSystem } from '../helpers/system';

/**
 * A valid write key is never refused for others' failures. Behind one NAT, one
 * misconfigured service spraying unknown keys must not throttle the company's other services; the
 * spray still costs the store nothing past INGEST_UNAUTHENTICATED_RATE_LIMIT, and a deleted source's
 * key stops working at once, on this API and (PostgreSQL, NOTIFY) on another.
 */
const LIMIT = 5;
// Long: the spraying address stays spent for the whole file.
const WINDOW_MS = 60_000;
const overrides = { ingestUnauthenticatedRateLimit: LIMIT, ingestRateLimit: 10_000, ingestRateWindow: WINDOW_MS };

const call = (pool: Pool, writeKey: string, messageId: string) =>
  pool
    .request({ method: 'POST', path: '/v1/track', headers: { authorization: basicAuth(writeKey), 'content-type': 'application/json' }, body: JSON.stringify({ userId: 'u', event: 'Neighbour', messageId }) })
    .then(async (r) => (await r.body.dump(), r.statusCode));

async function listening(system: TestSystem): Promise<string> {
  await system.app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(system.app.server.address() as AddressInfo).port}`;
}

describe('on one API (SQLite)', () => {
  let system: TestSystem;
  let pool: Pool;
  beforeAll(async () => {
    system = await startSystem(overrides);
    pool = new Pool(await listening(system), { connections: 16 });
  }, 120_000);
  afterAll(async () => {
    await pool?.close();
    await system?.close();
  });

  it('answers 200 to every valid-key call from an address spraying unknown keys, and the spray costs no lookup past the limit', async () => {
    const { writeKey } = await system.store.sources.create('honest neighbour');
    const lookups = jest.spyOn(system.store.sources, 'findByWriteKey');
    try {
      const spray = Array.from({ length: 400 }, (_, i) => call(pool, `random-${randomUUID()}`, `spray-${i}`));
      const honest = Array.from({ length: 40 }, (_, i) => call(pool, writeKey, `honest-${i}`));
      const [sprayed, answered] = await Promise.all([Promise.all(spray), Promise.all(honest)]);
      expect(answered).toEqual(Array(40).fill(200));
      expect(sprayed.filter((s) => s !== 401 && s !== 429)).toEqual([]);
      expect(sprayed.filter((s) => s === 401).length).toBeLessThanOrEqual(LIMIT);
      expect(lookups.mock.calls.length).toBeLessThanOrEqual(LIMIT);
    } finally {
      lookups.mockRestore();
    }
  });

  it("stops a deleted source's key at once, from the spent address as from any other", async () => {
    const { source, writeKey } = await system.store.sources.create('deleted at once');
    expect(await call(pool, writeKey, 'before-delete')).toBe(200);
    const deleted = await system.app.inject({ method: 'DELETE', url: `/admin/sources/${source.id}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(deleted.statusCode).toBe(204);
    // The address spent its allowance in the test above: refused before any lookup.
    expect(await call(pool, writeKey, 'after-delete')).toBe(429);
    const other = await system.app.inject({ method: 'POST', url: '/v1/track', remoteAddress: '127.0.0.9', headers: { authorization: basicAuth(writeKey) }, payload: { userId: 'u', event: 'Gone' } });
    expect(other.statusCode).toBe(401);
  });
});

describe('on two APIs sharing PostgreSQL', () => {
  let a: TestSystem;
  let b: OwnApi;
  let pool: Pool;
  beforeAll(async () => {
    const url = await createTestDatabase('write_keys');
    a = await startSystem({ ...overrides, databaseUrl: url });
    b = await startOwnApi(
      { ...process.env, DATABASE_URL: url, ADMIN_TOKEN, INGEST_UNAUTHENTICATED_RATE_LIMIT: String(LIMIT), INGEST_RATE_LIMIT: '10000', INGEST_RATE_WINDOW: '60s' },
      path.join(faultDir('write-key-neighbours'), 'api.log'),
    );
    pool = new Pool(b.url, { connections: 16 });
  }, 180_000);
  afterAll(async () => {
    await pool?.close();
    await stopProcess(b?.process);
    await a?.close();
  });

  it('answers a key made on the other API, keeps it answered while its address sprays, and refuses it within moments of its deletion there', async () => {
    const { source, writeKey } = await a.store.sources.create('made on a');
    expect(await call(pool, writeKey, 'pg-first')).toBe(200);
    const [sprayed, answered] = await Promise.all([
      Promise.all(Array.from({ length: 200 }, (_, i) => call(pool, `random-${randomUUID()}`, `pg-spray-${i}`))),
      Promise.all(Array.from({ length: 20 }, (_, i) => call(pool, writeKey, `pg-honest-${i}`))),
    ]);
    expect(answered).toEqual(Array(20).fill(200));
    expect(sprayed.filter((s) => s === 401).length).toBeLessThanOrEqual(LIMIT);
    expect(await a.store.sources.delete(source.id)).toBe(true);
    // NOTIFY: b's directory is read again; from the spent address the key is now just one more guess.
    await waitFor(async () => {
      const status = await call(pool, writeKey, `pg-after-${randomUUID()}`);
      if (status === 200) throw new Error('the deleted source still accepts calls');
      expect(status).toBe(429);
    }, 3_000);
  });
});
