import path from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { connectPostgres, postgresPool } from '../../src/store/connection';
import { isStoreUnavailable } from '../../src/store/unavailable';
import { faultDir } from '../helpers/faults';
import { createTestDatabase, startPostgres, type PostgresServer } from '../helpers/postgres';
import { waitFor } from '../helpers/processes';
import { storeRestartScenario } from '../helpers/store-restart-scenario';

/**
 * Issue 21: Switchyard's store PostgreSQL restarting must never end a Switchyard process, nor turn
 * into a 500: callers get 503 with Retry-After while it is away and service within seconds of its
 * return. scripts/faults.ts store-restart runs the drill at full size and repeatedly.
 */

const log = (line: string) => process.stdout.write(`${line}\n`);

describe('a pooled connection checked out when PostgreSQL goes away', () => {
  let postgres: PostgresServer;
  beforeAll(async () => {
    postgres = await startPostgres(path.join(faultDir('store-pool'), 'postgres'));
  }, 180_000);
  afterAll(async () => {
    await postgres?.stop();
  });

  it.each(['immediate', 'fast'] as const)('fails its query as "store unavailable" and leaves the process running (%s stop)', async (mode) => {
    const url = await createTestDatabase('switchyard_pool', postgres.url);
    const db = connectPostgres(postgresPool(url));
    // Without a listener on checked-out connections, their 'error' event throws out of the socket
    // callback: an uncaught exception, which ends a Switchyard process (and fails this test).
    const uncaught: Error[] = [];
    const record = (err: Error) => uncaught.push(err);
    process.on('uncaughtException', record);
    try {
      await sql`select 1`.execute(db);
      const longQuery = sql`select pg_sleep(60)`.execute(db).then(
        () => undefined,
        (err: Error) => err,
      );
      const watcher = new pg.Client({ connectionString: url });
      await watcher.connect();
      await waitFor(async () => {
        const { rows } = await watcher.query(`select count(*)::int as n from pg_stat_activity where query like 'select pg_sleep%' and application_name = 'switchyard'`);
        if (rows[0].n < 1) throw new Error('the long query is not running yet');
      }, 10_000);
      watcher.on('error', () => undefined);
      await postgres.restart(mode, 500);
      await watcher.end().catch(() => undefined);
      const failure = await longQuery;
      expect(failure).toBeInstanceOf(Error);
      expect(isStoreUnavailable(failure)).toBe(true);
      // The pool drops the dead connection on release and serves the next query on a new one.
      await waitFor(() => sql`select 1`.execute(db), 15_000);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(uncaught).toEqual([]);
    } finally {
      process.off('uncaughtException', record);
      await db.destroy();
    }
  }, 120_000);
});

it('answers 503 with Retry-After while the store PostgreSQL restarts (immediate, then fast), never 500 or a hang, and delivers every acknowledged call', async () => {
  const figures = await storeRestartScenario({ dir: faultDir('store-restart'), rate: 15, seconds: 24, restarts: ['immediate', 'fast'], downMs: 2_500, log });
  log(`store restart: ${JSON.stringify(figures)}`);
  expect({ api: figures.api, worker: figures.worker }).toEqual({ api: 'running', worker: 'running' });
  expect(Object.keys(figures.statuses).sort()).toEqual(expect.arrayContaining(['200']));
  for (const status of Object.keys(figures.statuses)) expect(['200', '503']).toContain(status);
  expect(figures.statuses['503']).toBeGreaterThan(0);
  expect(figures.unavailableWithoutRetryAfter).toBe(0);
  expect(figures.unavailableCodes).toContain('store_unavailable');
  // While PostgreSQL was away /health said so (503, store: false) at least once; after, 200.
  for (const seen of figures.healthWhileDown) expect(seen).toContainEqual({ status: 503, store: false });
  for (const after of figures.healthAfter) expect(after).toEqual({ status: 200, store: true });
  for (const recovery of figures.recoveryMs) {
    expect(recovery).toBeGreaterThanOrEqual(0);
    expect(recovery).toBeLessThan(10_000);
  }
  expect(figures.acked).toBeGreaterThan(0);
  expect(figures.lost).toBe(0);
}, 600_000);
