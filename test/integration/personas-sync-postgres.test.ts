import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import pg from 'pg';
import { describePersonasSyncRules } from '../helpers/personas-sync-cases';
import { createTestDatabase } from '../helpers/postgres';
import { spawnWorker, stopProcess, waitForPoller } from '../helpers/processes';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { startSystem, type TestSystem } from '../helpers/system';

/**
 * The Personas sync rules of personas-sync.test.ts end to end on the PostgreSQL store: the API
 * (in process) and a worker process of this file's own share a database of their own, on their own
 * task queue, so every profile write, audience query, diff and commit runs on PostgreSQL.
 */
const queue = `personas-postgres-${process.pid}`;

let system: TestSystem;
let receiver: Receiver;
let worker: ChildProcess | undefined;
let databaseUrl: string;

beforeAll(async () => {
  databaseUrl = await createTestDatabase('switchyard_personas');
  // The API first: it migrates the new database before the worker opens it.
  system = await startSystem({ temporalTaskQueue: queue, databaseUrl });
  receiver = await startReceiver();
  worker = spawnWorker({ TEMPORAL_TASK_QUEUE: queue, DATABASE_URL: databaseUrl }, path.join(process.env.SWITCHYARD_TEST_DIR ?? '.', 'personas-postgres-worker.log'));
  await waitForPoller(system.config.temporalAddress, system.config.temporalNamespace, queue, worker);
}, 240_000);
afterAll(async () => {
  await stopProcess(worker);
  await receiver?.close();
  await system?.close();
});

describePersonasSyncRules(() => ({ system, receiver }));

it('ran on PostgreSQL: the profiles and the committed snapshots are in this file\'s database', async () => {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query(`SELECT (SELECT count(*) FROM profiles) AS profiles, (SELECT count(*) FROM personas_snapshots) AS snapshots, (SELECT count(*) FROM computed_traits WHERE last_version > 0) AS synced_traits`);
    expect(Number(rows[0].profiles)).toBeGreaterThan(10);
    expect(Number(rows[0].snapshots)).toBeGreaterThan(5);
    expect(Number(rows[0].synced_traits)).toBe(3);
  } finally {
    await client.end();
  }
});
