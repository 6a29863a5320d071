import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { sql } from 'kysely';
import pg from 'pg';
import { deliveryPolicy, loadConfig } from '../../src/config';
import { deliveryWorkflowId } from '../../src/delivery/ids';
import type { DeliveryInput, DeliveryReport } from '../../src/delivery/types';
import { openStore } from '../../src/store';
import { connectPostgres, postgresPool } from '../../src/store/connection';
import { switchyardDataConverter } from '../../src/temporal/data-converter';
import { isStoreUnavailable } from '../../src/store/unavailable';
import { faultDir, sleep, startOwnWorker, stopProcess } from '../helpers/faults';
import { createTestDatabase, startPostgres, type PostgresServer } from '../helpers/postgres';
import { testKeyring } from '../helpers/payload-keys';
import { waitFor } from '../helpers/processes';
import { startReceiver } from '../helpers/receiver';
import { drillBroken } from '../helpers/fault-drill';
import { storeRestartScenario } from '../helpers/store-restart-scenario';
import { basicAuth, sourceWithDestination, startSystem } from '../helpers/system';

/**
 * Switchyard's store PostgreSQL restarting must never end a Switchyard process, nor turn
 * into a 500: callers get 503 with Retry-After while it is away and service within seconds of its
 * return. scripts/faults.ts store-restart runs the drill at full size and repeatedly.
 */

const log = (line: string) => process.stdout.write(`${line}\n`);

describe('with PostgreSQL away', () => {
  let postgres: PostgresServer;
  const dir = faultDir('store-pool');
  beforeAll(async () => {
    postgres = await startPostgres(path.join(dir, 'postgres'));
  }, 180_000);
  afterAll(async () => {
    await postgres?.stop();
  });

  it('a delivery whose first attempt (a local activity) finds the store away counts it as a lost attempt, and delivers once PostgreSQL is back', async () => {
    const databaseUrl = await createTestDatabase('switchyard_first_attempt', postgres.url);
    const receiver = await startReceiver();
    const store = await openStore({ databasePath: '', databaseUrl });
    const { source } = await store.sources.create('first attempt, store away');
    const destination = await store.destinations.create(source.id, { enabled: true, webhooks: [{ url: receiver.url, headers: {} }] });
    await store.close();
    const taskQueue = `store-away-${process.pid}`;
    const worker = await startOwnWorker({ DATABASE_URL: databaseUrl, TEMPORAL_TASK_QUEUE: taskQueue }, path.join(dir, 'worker.log'));
    const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS! });
    try {
      const policy = deliveryPolicy(loadConfig(process.env, { deliveryRetryWindow: 120_000, deliveryTimeout: 2_000, deliveryInitialBackoff: 500, deliveryMaxBackoff: 1_000, deliveryFirstAttemptLocal: true }));
      const messageId = 'first-attempt-store-away';
      const input: DeliveryInput = { sourceId: source.id, messageId, type: 'track', userId: 'u', destinationIds: [destination.id], message: { type: 'track', messageId, userId: 'u', event: 'Store Away' }, policy };
      await postgres.halt('immediate');
      const handle = await new Client({ connection, dataConverter: switchyardDataConverter(testKeyring()) }).workflow.start('deliverMessage', { taskQueue, workflowId: deliveryWorkflowId(source.id, messageId), args: [input] });
      // The first attempt runs now and cannot read the destination; rounds keep trying meanwhile.
      await sleep(3_000);
      expect(receiver.requests).toHaveLength(0);
      await postgres.start();
      const report = (await handle.result()) as DeliveryReport;
      expect(report.destinations).toEqual([expect.objectContaining({ destinationId: destination.id, status: 'delivered' })]);
      expect(receiver.requests).toHaveLength(1);
      expect(worker.process.exitCode).toBeNull();
    } finally {
      await connection.close();
      await stopProcess(worker.process);
      await receiver.close();
    }
  }, 180_000);

  it('counts a write-key lookup that waited on the store in INGEST_START_TIMEOUT: past it the call is refused with 503, and nothing is started', async () => {
    const databaseUrl = await createTestDatabase('switchyard_slow_lookup', postgres.url);
    const startTimeoutMs = 2_000;
    const system = await startSystem({ databaseUrl, ingestStartTimeout: startTimeoutMs, ingestRateLimit: 0 });
    const locker = new pg.Client({ connectionString: databaseUrl });
    try {
      const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: 'http://127.0.0.1:9/hook', headers: {} }] });
      await locker.connect();
      await locker.query('begin');
      await locker.query('lock table sources in access exclusive mode');
      // inject is lazy until awaited: Promise.resolve sends it now.
      const call = Promise.resolve(system.app.inject({ method: 'POST', url: '/v1/track', headers: { authorization: basicAuth(writeKey) }, payload: { userId: 'u', event: 'Slow Lookup', messageId: 'slow-lookup' } }));
      // The lookup is waiting on the lock; held past the timeout, it is a store slower than the deadline.
      await waitFor(async () => {
        // Inside a transaction pg_stat_activity is a snapshot taken at its first read: clear it each time.
        await locker.query('select pg_stat_clear_snapshot()');
        const { rows } = await locker.query(`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query like '%sources%' and pid <> pg_backend_pid()`);
        if (rows[0].n < 1) throw new Error('the lookup is not waiting yet');
      }, 30_000);
      await sleep(startTimeoutMs + 500);
      await locker.query('rollback');
      const res = await call;
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBeDefined();
      await expect(system.client.workflow.getHandle(deliveryWorkflowId(source.id, 'slow-lookup')).describe()).rejects.toThrow(/not found/i);
    } finally {
      await locker.end().catch(() => undefined);
      await system.close();
    }
  }, 120_000);

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

  // On the same PostgreSQL (a database of its own), last: it restarts the server twice. 10 calls a
  // second for 12 s put each restart (2.5 s down) under some 25 calls and a dozen /health readings,
  // and the drill goes on past the last one until a call after it is answered 200.
  it('answers 503 with Retry-After while the store PostgreSQL restarts (immediate, then fast), never 500 or a hang, and delivers every acknowledged call', async () => {
    const figures = await storeRestartScenario({ dir: faultDir('store-restart'), rate: 10, seconds: 12, restarts: ['immediate', 'fast'], downMs: 2_500, log, postgres });
    log(`store restart: ${JSON.stringify(figures)}`);
    expect(drillBroken(figures)).toEqual([]);
    expect(figures.statuses['200']).toBeGreaterThan(0);
    expect(figures.unavailableCodes).toContain('store_unavailable');
  }, 600_000);
});
