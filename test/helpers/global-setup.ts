import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { freePort } from './ports';
import { startPostgres } from './postgres';
import { TEST_PAYLOAD_KEYS_FILE } from './payload-keys';
import { ensureRealTemporal } from './real-temporal';
import { ROOT, spawnWorker, startTemporal, waitForPoller } from './processes';

/**
 * One real Temporal dev server and one real worker process for the whole run (Temporal's native
 * runtime is process-wide, so no worker lives inside Jest). Each test file makes its own sources,
 * so workflow ids never collide; delivery timing comes with each message, so one worker serves
 * tests with different retry windows.
 */
/**
 * Temporal deletes a closed workflow only once its close task is behind the transfer queue's
 * persisted ack level, which the server writes every `transferProcessorUpdateAckInterval` (30 s by
 * default, jittered; the visibility queue's likewise): until then the delete task fails as
 * "dependency task not completed" and is retried with a growing backoff, so a DELETE regulation's
 * workflows vanished 30-60 s later on a quiet box and past two minutes on a loaded one (the
 * regulations-health flake). A short interval makes deletes take seconds; nothing else the tests
 * rely on reads it.
 */
const DEV_SERVER_SETTINGS = ['history.transferProcessorUpdateAckInterval', 'history.visibilityProcessorUpdateAckInterval'].flatMap((key) => ['--dynamic-config-value', `${key}="1s"`]);

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
    // Every process of the run encrypts payloads with the committed test key (issue 19).
    PAYLOAD_KEYS_FILE: TEST_PAYLOAD_KEYS_FILE,
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

  const temporal = await startTemporal(port, path.join(dir, 'temporal.db'), path.join(dir, 'temporal.log'), DEV_SERVER_SETTINGS);
  (globalThis as Record<string, unknown>).__SWITCHYARD_TEMPORAL__ = temporal;
  const worker = spawnWorker(env, path.join(dir, 'worker.log'));
  (globalThis as Record<string, unknown>).__SWITCHYARD_WORKER__ = worker;
  await waitForPoller(env.TEMPORAL_ADDRESS, env.TEMPORAL_NAMESPACE, env.TEMPORAL_TASK_QUEUE, worker);
}
