import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { freePort } from './ports';
import { startPostgres } from './postgres';
import { ensureRealTemporal } from './real-temporal';
import { ROOT, spawnWorker, startTemporal, waitForPoller } from './processes';

/**
 * One real Temporal dev server and one real worker process for the whole run (Temporal's native
 * runtime is process-wide, so no worker lives inside Jest). Each test file makes its own sources,
 * so workflow ids never collide; delivery timing comes with each message, so one worker serves
 * tests with different retry windows.
 */
export default async function globalSetup(): Promise<void> {
  const dir = path.join(ROOT, '.test-data', `run-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const env = {
    TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_TASK_QUEUE: 'switchyard-test',
    DATABASE_PATH: path.join(dir, 'switchyard.db'),
    DATA_DIR: dir,
    EGRESS_ALLOWLIST: '127.0.0.0/8,::1/128',
    LOG_LEVEL: 'info',
    SWITCHYARD_TEST_DIR: dir,
    // The worker adds its webhook health to the store this often: tests read it back within a second.
    HEALTH_FLUSH_INTERVAL: '200ms',
    // The committed test key (issue 19): every spawned process and in-process system hashes and
    // encrypts under it, so tests can decode what they wrote and replay fixtures stay readable.
    PAYLOAD_KEYS_FILE: path.join(ROOT, 'test', 'fixtures', 'payload-keys'),
  };
  Object.assign(process.env, env);

  // Temporal's own server (production-shape and secured-Temporal tests): built once per machine
  // from the Go module proxy, here rather than inside a test's timeout; no Go fails loudly here.
  await ensureRealTemporal();

  // A real PostgreSQL for the store tests of that dialect and the production-shape tests; each
  // test file creates its own database on it (test/helpers/postgres.ts createTestDatabase).
  const postgres = await startPostgres(path.join(dir, 'postgres'));
  process.env.SWITCHYARD_TEST_POSTGRES = postgres.url;
  (globalThis as Record<string, unknown>).__SWITCHYARD_POSTGRES__ = postgres;

  const temporal = await startTemporal(port, path.join(dir, 'temporal.db'), path.join(dir, 'temporal.log'));
  (globalThis as Record<string, unknown>).__SWITCHYARD_TEMPORAL__ = temporal;
  const worker = spawnWorker(env, path.join(dir, 'worker.log'));
  (globalThis as Record<string, unknown>).__SWITCHYARD_WORKER__ = worker;
  await waitForPoller(env.TEMPORAL_ADDRESS, env.TEMPORAL_NAMESPACE, env.TEMPORAL_TASK_QUEUE, worker);
}
