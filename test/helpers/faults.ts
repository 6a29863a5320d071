import type { ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { freePort } from './ports';
import { ROOT, spawnApi, spawnWorker, startTemporal, stopProcess, waitFor, waitForPoller } from './processes';

/**
 * Processes a fault test owns — its own Temporal dev server, worker or API — so it can kill them
 * without touching the run's shared ones. Each lives under its own folder of the test run.
 */

export function faultDir(name: string): string {
  const dir = path.join(process.env.SWITCHYARD_TEST_DIR ?? path.join(ROOT, '.test-data', `faults-${process.pid}`), `${name}-${process.pid}-${Date.now()}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

export interface OwnWorker {
  process: ChildProcess;
  logFile: string;
  /** What it was started with over the run's environment (to start one like it again). */
  env: NodeJS.ProcessEnv;
  /** Resolves with the exit code (or signal) once the process has exited. */
  exited: Promise<number | string>;
}

/** A real worker process (src/worker.ts) with `env` over the run's environment; resolves once it polls. */
export async function startOwnWorker(env: NodeJS.ProcessEnv, logFile: string): Promise<OwnWorker> {
  const child = spawnWorker(env, logFile);
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  const address = env.TEMPORAL_ADDRESS ?? process.env.TEMPORAL_ADDRESS!;
  await waitForPoller(address, env.TEMPORAL_NAMESPACE ?? process.env.TEMPORAL_NAMESPACE ?? 'default', env.TEMPORAL_TASK_QUEUE ?? process.env.TEMPORAL_TASK_QUEUE!, child);
  return { process: child, logFile, env, exited };
}

export interface OwnApi {
  process: ChildProcess;
  url: string;
  port: number;
  logFile: string;
  env: NodeJS.ProcessEnv;
  exited: Promise<number | string>;
}

/** A real API process (src/server.ts) on its own port; resolves once it answers. */
export async function startOwnApi(env: NodeJS.ProcessEnv, logFile: string, port?: number): Promise<OwnApi> {
  const listen = port ?? (await freePort());
  const child = spawnApi(env, listen, logFile);
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  const url = `http://127.0.0.1:${listen}`;
  await waitFor(
    async () => {
      const res = await fetch(`${url}/openapi.json`);
      if (!res.ok) throw new Error(`API answered ${res.status}`);
    },
    120_000,
    () => child.exitCode !== null && `API exited with ${child.exitCode}; see ${logFile}`,
  );
  return { process: child, url, port: listen, logFile, env, exited };
}

/**
 * Delivery timing for fault runs: short attempts and backoff, so retries happen within a drill, and
 * a retry window long enough to outlast any fault.
 */
export const FAULT_DELIVERY_ENV = { DELIVERY_TIMEOUT: '2s', DELIVERY_INITIAL_BACKOFF: '200ms', DELIVERY_MAX_BACKOFF: '2s', DELIVERY_RETRY_WINDOW: '15m' };

/** The admin token of every API a fault test starts for itself (sourceThrough uses it). */
export const ADMIN_TOKEN = 'production-shape-admin-0123456789ab';

export interface OwnPair {
  api: OwnApi;
  worker: OwnWorker;
  stop(): Promise<void>;
}

/**
 * A worker and an API of the test's own on one task queue of their own, with fault-run delivery
 * timing and no ingestion rate limit; `env` goes to both, `apiEnv`/`workerEnv` to one (a TCP
 * relay's address, say). The worker starts first, so the API's first calls find a poller.
 */
export async function startOwnPair(options: { dir: string; name: string; env?: NodeJS.ProcessEnv; apiEnv?: NodeJS.ProcessEnv; workerEnv?: NodeJS.ProcessEnv }): Promise<OwnPair> {
  const shared = { TEMPORAL_TASK_QUEUE: `${options.name}-${process.pid}-${Date.now()}`, ...FAULT_DELIVERY_ENV, ...options.env };
  const worker = await startOwnWorker({ ...shared, ...options.workerEnv }, path.join(options.dir, 'worker.log'));
  try {
    const api = await startOwnApi({ ...shared, ADMIN_TOKEN, INGEST_RATE_LIMIT: '0', ...options.apiEnv }, path.join(options.dir, 'api.log'));
    return {
      api,
      worker,
      async stop() {
        await stopProcess(worker.process);
        await stopProcess(api.process);
      },
    };
  } catch (err) {
    await stopProcess(worker.process);
    throw err;
  }
}

export interface OwnTemporal {
  address: string;
  port: number;
  dbFile: string;
  logFile: string;
  process: ChildProcess;
}

/** A Temporal dev server of the test's own, on its own port and SQLite file; `extraArgs` go to `start-dev`. */
export async function startOwnTemporal(dir: string, port?: number, extraArgs: string[] = []): Promise<OwnTemporal> {
  const listen = port ?? (await freePort());
  const dbFile = path.join(dir, 'temporal.db');
  const logFile = path.join(dir, 'temporal.log');
  const child = await startTemporal(listen, dbFile, logFile, extraArgs);
  return { address: `127.0.0.1:${listen}`, port: listen, dbFile, logFile, process: child };
}

export { stopProcess };

/** The p-th percentile (0-100) of some numbers, nearest-rank. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function readLog(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
