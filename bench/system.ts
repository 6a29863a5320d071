import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, openSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { request } from 'undici';
import { loadConfig } from '../src/config';
import { startDevServer } from '../src/temporal/dev-server';
import { freePort } from '../test/helpers/ports';
import { ROOT, stopProcess, waitFor, waitForPoller } from '../test/helpers/processes';

/** Where a delivered message (or a bare no-op) was seen, and when (ms, sub-ms resolution). */
export type Receipt = [messageId: string, at: number];

export interface BenchStack {
  dir: string;
  temporalAddress: string;
  client: Client;
  receiverUrl: string;
  switchyard: { apiUrl: string; writeKey: string; sourceId: string; taskQueue: string };
  bare: { taskQueue: string };
  /** Process ids by role, for CPU and memory accounting. */
  pids: Record<string, number>;
  /** Called with every batch of receipts from the receiver and from the bare worker. */
  onReceipts(listener: (receipts: Receipt[]) => void): void;
  /** TCP connections the receiver has accepted so far. */
  receiverConnections(): number;
  /** The Switchyard settings the bench set for its API and worker (beyond the inherited environment). */
  settings: Record<string, string>;
  stop(): Promise<void>;
}

const NAMESPACE = 'default';

function logTo(file: string): number {
  return openSync(file, 'a');
}

/** A Node child running a TypeScript file through tsx (as the Dockerfile runs Switchyard), with an IPC channel. */
function spawnTs(file: string, env: NodeJS.ProcessEnv, logFile: string, nodeArgs: string[] = []): ChildProcess {
  const log = logTo(logFile);
  return spawn(process.execPath, [...nodeArgs, '--import', 'tsx', path.join(ROOT, file)], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', log, log, 'ipc'],
  });
}

function exited(child: ChildProcess, name: string, logFile: string): string | false {
  return child.exitCode !== null && `${name} exited with ${child.exitCode}; see ${logFile}`;
}

/**
 * Everything the bench measures, started fresh in its own folder: a Temporal dev server on its own
 * port and SQLite file, Switchyard's API and worker as separate processes (src/server.ts,
 * src/worker.ts), the bare-Temporal reference worker, and the receiver. Nothing a test run or
 * `npm start` started is reused.
 */
export interface StackOptions {
  /** Extra `temporal server start-dev` flags. */
  temporalFlags: string[];
  /** Workflow starts the API keeps in flight per request (INGEST_START_CONCURRENCY). */
  fanout: number;
  /** Folder for V8 CPU profiles of the API, the worker and the bare worker (written when they stop). */
  cpuProfileDir?: string;
  /** API and worker in one process (src/main.ts), as `npm start` runs them. */
  combined?: boolean;
}

export async function startStack(dir: string, log: (line: string) => void, options: StackOptions): Promise<BenchStack> {
  mkdirSync(dir, { recursive: true });
  const children: [string, ChildProcess][] = [];
  const listeners: ((receipts: Receipt[]) => void)[] = [];
  let receiverConnections = 0;
  const forward = (message: { receipts?: Receipt[]; connections?: number }) => {
    if (message.connections !== undefined) receiverConnections = message.connections;
    if (message.receipts) for (const listener of listeners) listener(message.receipts);
  };
  let client: Client | undefined;
  // Whatever ends the bench (an error, Ctrl-C, a hung child), none of its processes outlive it.
  const killAll = () => {
    for (const [, child] of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  process.once('exit', killAll);

  async function stop(): Promise<void> {
    await client?.connection.close().catch(() => undefined);
    // Clients of Temporal first, the server last.
    for (const [, child] of [...children].reverse()) await stopProcess(child, 'SIGTERM', 15_000);
    process.off('exit', killAll);
  }

  try {
    const temporalPort = await freePort();
    const temporalAddress = `127.0.0.1:${temporalPort}`;
    log(`Temporal dev server on ${temporalAddress} (data in ${path.relative(ROOT, dir)})`);
    const temporalLog = path.join(dir, 'temporal.log');
    const temporal = startDevServer({ port: temporalPort, dbFile: path.join(dir, 'temporal.db'), headless: true, extraArgs: options.temporalFlags });
    children.push(['temporal', temporal]);
    const temporalLogStream = createWriteStream(temporalLog, { flags: 'a' });
    temporal.stdout?.pipe(temporalLogStream);
    temporal.stderr?.pipe(temporalLogStream);
    client = await waitFor(async () => {
      const connection = await Connection.connect({ address: temporalAddress, connectTimeout: 1_000 });
      await connection.workflowService.getSystemInfo({});
      return new Client({ connection, namespace: NAMESPACE });
    }, 15 * 60_000, () => exited(temporal, 'Temporal dev server', temporalLog));

    const receiverLog = path.join(dir, 'receiver.log');
    const receiver = spawnTs('bench/receiver.ts', {}, receiverLog);
    children.push(['receiver', receiver]);
    const receiverPort = await new Promise<number>((resolve, reject) => {
      receiver.once('message', (message: { port?: number }) => (message.port ? resolve(message.port) : reject(new Error('receiver did not report its port'))));
      receiver.once('exit', (code) => reject(new Error(`receiver exited with ${code}; see ${receiverLog}`)));
    });
    receiver.on('message', forward);

    const adminToken = randomBytes(16).toString('hex');
    const apiPort = await freePort();
    const switchyardEnv = {
      TEMPORAL_ADDRESS: temporalAddress,
      TEMPORAL_NAMESPACE: NAMESPACE,
      TEMPORAL_TASK_QUEUE: 'bench-switchyard',
      DATA_DIR: dir,
      DATABASE_PATH: path.join(dir, 'switchyard.db'),
      ADMIN_TOKEN: adminToken,
      PORT: String(apiPort),
      HOST: '127.0.0.1',
      // The receiver is on loopback, which webhooks may not reach by default.
      EGRESS_ALLOWLIST: '127.0.0.0/8',
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
      // The bench is one write key sending as fast as it can; the per-key limit is raised, not removed.
      INGEST_RATE_LIMIT: process.env.INGEST_RATE_LIMIT ?? '100000',
      INGEST_START_CONCURRENCY: String(options.fanout),
      // Starts queue behind a saturated dev server; the bench measures that queue instead of
      // answering 503 after the default 10 s (its re-sent batches would be extra work).
      INGEST_START_TIMEOUT: process.env.INGEST_START_TIMEOUT ?? '60s',
      // One destination takes every message here; its per-URL cap is raised to the worker's activity
      // slots so the bench measures delivery, not the cap (docs/performance.md measures the cap).
      WORKER_MAX_IN_FLIGHT_PER_WEBHOOK: process.env.WORKER_MAX_IN_FLIGHT_PER_WEBHOOK ?? String(loadConfig().workerMaxConcurrentActivities),
    };
    const profile = (name: string) => (options.cpuProfileDir ? ['--cpu-prof', '--cpu-prof-dir', options.cpuProfileDir, '--cpu-prof-name', `${name}.cpuprofile`] : []);
    const workerLog = path.join(dir, 'worker.log');
    const apiLog = options.combined ? workerLog : path.join(dir, 'api.log');
    let worker: ChildProcess;
    let api: ChildProcess;
    if (options.combined) {
      log('Switchyard worker and API in one process (src/main.ts, eager workflow starts)');
      // Metered as the worker; its CPU and memory include the API's.
      worker = api = spawnTs('src/main.ts', { ...switchyardEnv, EMBEDDED_TEMPORAL: 'false' }, workerLog, profile('worker'));
      children.push(['worker', worker]);
    } else {
      log('Switchyard worker and API (separate processes)');
      worker = spawnTs('src/worker.ts', switchyardEnv, workerLog, profile('worker'));
      children.push(['worker', worker]);
      api = spawnTs('src/server.ts', switchyardEnv, apiLog, profile('api'));
      children.push(['api', api]);
    }

    const bareEnv = { ...switchyardEnv, TEMPORAL_TASK_QUEUE: 'bench-bare' };
    const bareLog = path.join(dir, 'bare-worker.log');
    const bare = spawnTs('bench/bare/bare-worker.ts', bareEnv, bareLog, profile('bare-worker'));
    children.push(['bareWorker', bare]);
    bare.on('message', forward);

    await waitForPoller(temporalAddress, NAMESPACE, switchyardEnv.TEMPORAL_TASK_QUEUE, worker);
    await waitForPoller(temporalAddress, NAMESPACE, bareEnv.TEMPORAL_TASK_QUEUE, bare);
    const apiUrl = `http://127.0.0.1:${apiPort}`;
    await waitFor(async () => {
      const response = await request(`${apiUrl}/health`);
      await response.body.dump();
      if (response.statusCode !== 200) throw new Error(`/health answered ${response.statusCode}`);
    }, 120_000, () => exited(api, 'API', apiLog));

    const admin = async <T>(url: string, body: unknown): Promise<T> => {
      const response = await request(`${apiUrl}${url}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const reply = (await response.body.json()) as T;
      if (response.statusCode !== 201) throw new Error(`${url} answered ${response.statusCode}: ${JSON.stringify(reply)}`);
      return reply;
    };
    const source = await admin<{ id: string; writeKey: string }>('/admin/sources', { name: 'bench' });
    // Signed, like a real destination: the signature is part of the work per message.
    await admin(`/admin/sources/${source.id}/destinations`, { enabled: true, sharedSecret: 'bench-secret', webhooks: [{ url: `http://127.0.0.1:${receiverPort}/hook` }] });

    return {
      dir,
      temporalAddress,
      client,
      receiverUrl: `http://127.0.0.1:${receiverPort}/hook`,
      switchyard: { apiUrl, writeKey: source.writeKey, sourceId: source.id, taskQueue: switchyardEnv.TEMPORAL_TASK_QUEUE },
      bare: { taskQueue: bareEnv.TEMPORAL_TASK_QUEUE },
      pids: { sender: process.pid, ...Object.fromEntries(children.map(([role, child]) => [role, child.pid!])) },
      onReceipts: (listener) => void listeners.push(listener),
      receiverConnections: () => receiverConnections,
      settings: Object.fromEntries(['LOG_LEVEL', 'INGEST_RATE_LIMIT', 'INGEST_START_CONCURRENCY', 'INGEST_START_TIMEOUT', 'WORKER_MAX_IN_FLIGHT_PER_WEBHOOK', 'EGRESS_ALLOWLIST'].map((key) => [key, switchyardEnv[key as keyof typeof switchyardEnv]])),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
