import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { startDevServer } from '../../src/temporal/dev-server';
import { nodeArgsFor } from './compiled-source';

export const ROOT = path.resolve(__dirname, '../..');

/**
 * A real Temporal dev server on its own port and SQLite file, logging to a file of the test run.
 * The dev server picks some ports itself (its HTTP API among them) by asking for a free one and
 * binding it later; another process can take it in between. Such a start is retried.
 */
export async function startTemporal(port: number, dbFile: string, logFile: string, extraArgs: string[] = []): Promise<ChildProcess> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startTemporalOnce(port, dbFile, logFile, extraArgs);
    } catch (err) {
      const portTaken = readFileSync(logFile, 'utf8').includes('address already in use');
      if (!portTaken || attempt >= 3) throw err;
    }
  }
}

async function startTemporalOnce(port: number, dbFile: string, logFile: string, extraArgs: string[]): Promise<ChildProcess> {
  const server = startDevServer({ port, dbFile, headless: true, extraArgs });
  const log = createWriteStream(logFile, { flags: 'a' });
  server.stdout?.pipe(log);
  server.stderr?.pipe(log);
  await waitFor(async () => {
    const connection = await Connection.connect({ address: `127.0.0.1:${port}`, connectTimeout: 1_000 });
    try {
      await connection.workflowService.getSystemInfo({});
    } finally {
      await connection.close();
    }
  }, 15 * 60_000, () => server.exitCode !== null && `Temporal dev server exited with ${server.exitCode}; see ${logFile}`);
  return server;
}

/** A real entry point (src/<entry>.ts: the run's transpiled twin, else through tsx) with `env` over the run's environment, its output in `logFile`. */
function spawnEntry(entry: string, env: NodeJS.ProcessEnv, logFile: string): ChildProcess {
  const child = spawn(process.execPath, nodeArgsFor(`src/${entry}.ts`), {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log = createWriteStream(logFile, { flags: 'a' });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  return child;
}

/** A real worker process (src/worker.ts) with the given environment. */
export const spawnWorker = (env: NodeJS.ProcessEnv, logFile: string) => spawnEntry('worker', env, logFile);

/**
 * Starts of a file's own worker on its own task queue (a file that kills and restarts it): each
 * start logs to its own numbered file in the run's test dir (`<name>-worker-<n>.log`) and answers
 * once that process polls. `temporal`: the system whose server it polls, read at each start.
 */
export function ownWorkerStarts(name: string, env: NodeJS.ProcessEnv & { TEMPORAL_TASK_QUEUE: string }, temporal: () => { temporalAddress: string; temporalNamespace: string }): () => Promise<ChildProcess> {
  let starts = 0;
  return async () => {
    const child = spawnWorker(env, path.join(process.env.SWITCHYARD_TEST_DIR ?? '.', `${name}-worker-${++starts}.log`));
    const { temporalAddress, temporalNamespace } = temporal();
    await waitForPoller(temporalAddress, temporalNamespace, env.TEMPORAL_TASK_QUEUE, child);
    return child;
  };
}

/** A real API process (src/server.ts) on 127.0.0.1:`port`. */
export const spawnApi = (env: NodeJS.ProcessEnv, port: number, logFile: string) => spawnEntry('server', { ...env, PORT: String(port), HOST: '127.0.0.1' }, logFile);

/**
 * Resolves once a worker polls the task queue (its workflow bundle is built by then); given the
 * worker's process, once that process does. Another worker already polling the queue (the first of
 * two, or one just killed, which Temporal lists for a while) is not this one: a second worker still
 * starting (seconds of CPU on a loaded box) would otherwise be taken for ready, and the test would
 * run on one. The SDK names a poller `<pid>@<host>`.
 */
export async function waitForPoller(address: string, namespace: string, taskQueue: string, process?: ChildProcess): Promise<void> {
  const connection = await Connection.connect({ address });
  const ours = process?.pid === undefined ? () => true : (identity: string | null | undefined) => identity?.startsWith(`${process.pid}@`) === true;
  try {
    await waitFor(async () => {
      const { pollers } = await connection.workflowService.describeTaskQueue({ namespace, taskQueue: { name: taskQueue } });
      if (!pollers?.some((poller) => ours(poller.identity))) throw new Error(`no poller on ${taskQueue}${process?.pid === undefined ? '' : ` from process ${process.pid}`}`);
    }, 180_000, () => process !== undefined && process.exitCode !== null && `worker exited with ${process.exitCode}`);
  } finally {
    await connection.close();
  }
}

export async function stopProcess(child: ChildProcess | undefined, signal: NodeJS.Signals = 'SIGTERM', graceMs = 10_000): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Polls `check` until it stops throwing; `fatal` may end the wait early with a reason. */
export async function waitFor<T>(check: () => Promise<T> | T, timeoutMs: number, fatal?: () => string | false): Promise<T> {
  const until = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    const reason = fatal?.();
    if (reason) throw new Error(reason);
    try {
      return await check();
    } catch (err) {
      last = err;
    }
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs}ms: ${(last as Error)?.message ?? last}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
