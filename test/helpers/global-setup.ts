import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '@jest/types';
import type { Logger } from '@temporalio/worker';
import { bundleWorkflows } from '../../src/temporal/workflow-bundle';
import { COMPILED_SOURCE_ENV, compileSource } from './compiled-source';
import { freePort } from './ports';
import { startPostgres } from './postgres';
import { TEST_PAYLOAD_KEYS_FILE } from './payload-keys';
import { ensureRealTemporal } from './real-temporal';
import { ROOT, spawnWorker, startTemporal, waitForPoller } from './processes';
import { SLOTS_ENV, slotEnv } from './slots';

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

/** Webpack's statistics and Temporal's bundle notes are noise in a test run; warnings and errors still show. */
const QUIET: Logger = { log() {}, trace() {}, debug() {}, info() {}, warn: console.warn, error: console.error };

/**
 * Set by `npm test` for the files it runs alone, which bring their own Temporal and PostgreSQL:
 * no shared service is started for them (their slot still names a store, data dir and queue).
 */
export const OWN_SERVICES_ENV = 'SWITCHYARD_TEST_OWN_SERVICES';

/** Jest workers of the run: one slot each (1 in band). */
const slotCount = (globalConfig?: Pick<Config.GlobalConfig, 'maxWorkers'>) => Math.max(1, globalConfig?.maxWorkers ?? 1);

export default async function globalSetup(globalConfig?: Pick<Config.GlobalConfig, 'maxWorkers'>): Promise<void> {
  const dir = path.join(ROOT, '.test-data', `run-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  // Bundled once for every worker process of the run, instead of a webpack run (seconds of CPU) in each.
  const bundle = path.join(dir, 'workflow-bundle.js');
  const env = {
    TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
    TEMPORAL_NAMESPACE: 'default',
    EGRESS_ALLOWLIST: '127.0.0.0/8,::1/128',
    LOG_LEVEL: 'info',
    // The worker adds its webhook health to the store this often: tests read it back within a second.
    HEALTH_FLUSH_INTERVAL: '200ms',
    // Every process of the run encrypts payloads with the committed test key.
    PAYLOAD_KEYS_FILE: TEST_PAYLOAD_KEYS_FILE,
    WORKFLOW_BUNDLE: bundle,
  };
  const slots = Object.fromEntries(Array.from({ length: slotCount(globalConfig) }, (_, i) => [String(i + 1), slotEnv(dir, i + 1)]));
  for (const slot of Object.values(slots)) mkdirSync(slot.DATA_DIR, { recursive: true });
  // Slot 1's store and queue are also the defaults of anything that runs outside a slot.
  Object.assign(process.env, env, slots['1'], { [SLOTS_ENV]: JSON.stringify(slots) });

  // Independent starts, side by side. Temporal's own server (production-shape and secured-Temporal
  // tests) is built once per machine from the Go module proxy, here rather than inside a test's
  // timeout; no Go fails loudly here. A real PostgreSQL serves the store tests of that dialect and
  // the production-shape tests; each test file creates its own database on it
  // (test/helpers/postgres.ts createTestDatabase).
  // src/ transpiled once, before any process of the run starts from it (test/helpers/compiled-source.ts).
  process.env[COMPILED_SOURCE_ENV] = await compileSource();
  if (process.env[OWN_SERVICES_ENV] === '1') {
    // The files run alone (test/run-alone.txt) start their own Temporal server and PostgreSQL:
    // the shared dev server, PostgreSQL and slot workers would only take seconds of CPU from them.
    await Promise.all([ensureRealTemporal(), bundleWorkflows(QUIET).then(({ code }) => writeFileSync(bundle, code))]);
    return;
  }
  const [postgres, temporal] = await Promise.all([
    startPostgres(path.join(dir, 'postgres')),
    startTemporal(port, path.join(dir, 'temporal.db'), path.join(dir, 'temporal.log'), DEV_SERVER_SETTINGS),
    ensureRealTemporal(),
    bundleWorkflows(QUIET).then(({ code }) => writeFileSync(bundle, code)),
  ]);
  process.env.SWITCHYARD_TEST_POSTGRES = postgres.url;
  (globalThis as Record<string, unknown>).__SWITCHYARD_POSTGRES__ = postgres;
  (globalThis as Record<string, unknown>).__SWITCHYARD_TEMPORAL__ = temporal;
  const workers = Object.values(slots).map((slot) => ({ slot, worker: spawnWorker({ ...env, ...slot }, path.join(slot.DATA_DIR, 'worker.log')) }));
  (globalThis as Record<string, unknown>).__SWITCHYARD_WORKERS__ = workers.map(({ worker }) => worker);
  await Promise.all(workers.map(({ slot, worker }) => waitForPoller(env.TEMPORAL_ADDRESS, env.TEMPORAL_NAMESPACE, slot.TEMPORAL_TASK_QUEUE, worker)));
  // The shared processes, so each file's CPU can be split by process (test/jest/cpu.js).
  process.env.SWITCHYARD_TEST_PIDS = JSON.stringify({
    temporal: temporal.pid,
    postgres: Number(readFileSync(path.join(dir, 'postgres', 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]),
    workers: Object.fromEntries(workers.map(({ worker }, i) => [String(i + 1), worker.pid])),
  });
}
