import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { request } from 'undici';
import { MAX_REQUESTS_PER_SECOND_LIMIT } from '../src/api/admin/destinations';
import { loadConfig } from '../src/config';
import { loadKeyring } from '../src/privacy/load-keyring';
import { switchyardDataConverter } from '../src/temporal/data-converter';
import { startDevServer } from '../src/temporal/dev-server';
import { freePort } from '../test/helpers/ports';
import { createTestDatabase } from '../test/helpers/postgres';
import { startRealTemporal, type RealTemporal } from '../test/helpers/real-temporal';
import { nodeArgsFor } from '../test/helpers/compiled-source';
import { ROOT, stopProcess, waitFor, waitForPoller } from '../test/helpers/processes';
import { GOVERNED_CONSENT, GOVERNED_FILTERS } from './governed-destination';
import { mappedDestination } from './mapped-destination';
import { insertedSource, scriptedSource } from './function-destinations';
import { planRules, PLAN_RULES } from './tracking-plan-rules';

/** Where a delivered message (or a bare no-op) was seen, and when (ms, sub-ms resolution). */
export type Receipt = [messageId: string, at: number];

export interface BenchStack {
  dir: string;
  temporalAddress: string;
  client: Client;
  receiverUrl: string;
  /** `apiUrls`: every API process (`apiUrl` is the first), for a sender that spreads batches over them. */
  switchyard: { apiUrl: string; apiUrls: string[]; writeKey: string; sourceId: string; taskQueue: string };
  bare: { taskQueue: string };
  /**
   * Switchyard with one setting changed (VARIANT_SETTINGS), one worker and one API on its own task
   * queue, same store and receiver, when asked for; each with its own source.
   */
  variants: Partial<Record<VariantName, { apiUrl: string; taskQueue: string; writeKey: string; sourceId: string }>>;
  /** The empty-workflow reference: its ingestion URLs (POST /v1/batch, one per API process), task queue and the source id its workflow ids carry. */
  floor: FloorReference;
  /** The design floor (the empty workflow calling one no-op local activity), when asked for. */
  designFloor?: FloorReference;
  /** Another source on Switchyard's own processes whose destination has a rate limit that never binds (the `limited` system). */
  limited: { writeKey: string; sourceId: string };
  /** Another source on Switchyard's own processes whose destination has consent categories and 10 filters (the `governed` system). */
  governed: { writeKey: string; sourceId: string };
  /** Another source on Switchyard's own processes whose destination is an Actions destination with two mappings (the `mapped` system). */
  mapped: { writeKey: string; sourceId: string };
  /** Sources whose destination runs an insert function (`inserted`) or is a destination function (`scripted`). */
  inserted: { writeKey: string; sourceId: string };
  scripted: { writeKey: string; sourceId: string };
  /** Another source on Switchyard's own processes with a connected 50-rule tracking plan its messages meet (the `planned` system). */
  planned: { writeKey: string; sourceId: string };
  /** Process ids by role, for CPU and memory accounting. */
  pids: Record<string, number>;
  /** Roles metered as a process tree (PostgreSQL's postmaster and its backends), not one process. */
  processTrees: ReadonlySet<string>;
  /**
   * Bytes of data the server keeps, when it is not the dev server's SQLite in `dir`: the real
   * server's PostgreSQL databases (temporal, temporal_visibility and Switchyard's store).
   */
  dataBytes?(): Promise<number>;
  /** Called with every batch of receipts from the receiver and from the bare worker. */
  onReceipts(listener: (receipts: Receipt[]) => void): void;
  /** TCP connections the receiver has accepted so far. */
  receiverConnections(): number;
  /** The Switchyard settings the bench set for its API and worker (beyond the inherited environment). */
  settings: Record<string, string>;
  /** Another Switchyard source with one (unsigned) destination sending to `webhookUrl` (the noisy scenario's hanging one). */
  addSource(name: string, webhookUrl: string): Promise<{ sourceId: string; writeKey: string }>;
  /** An admin API request to the first API process, as the bootstrap admin token; throws unless it answers 2xx. */
  adminRequest<T>(method: 'GET' | 'POST', url: string, body?: unknown): Promise<T>;
  stop(): Promise<void>;
}

export interface FloorReference {
  apiUrls: string[];
  taskQueue: string;
  sourceId: string;
}

/** Switchyard's variants the bench can run beside it, each the setting it changes. */
export const VARIANT_SETTINGS = {
  plain: { PAYLOAD_ENCRYPTION: 'off' },
  unarchived: { ARCHIVE_RETENTION: '0' },
} as const;
export type VariantName = keyof typeof VARIANT_SETTINGS;

const NAMESPACE = 'default';
/** Ids of the shape the store makes, for the floor's workflows (there is no such source or destination). */
const FLOOR_SOURCE_ID = `src_${'f'.repeat(32)}`;
const FLOOR_DESTINATION_ID = `dst_${'f'.repeat(32)}`;

function logTo(file: string): number {
  return openSync(file, 'a');
}

/**
 * A Node child running a TypeScript file through tsx, with an IPC channel; under a test run that
 * transpiled src/ once (test/helpers/compiled-source.ts), src/'s entries run from that JavaScript.
 */
function spawnTs(file: string, env: NodeJS.ProcessEnv, logFile: string, nodeArgs: string[] = []): ChildProcess {
  const log = logTo(logFile);
  return spawn(process.execPath, [...nodeArgs, ...nodeArgsFor(file)], {
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
  /** The dev server (default), or the real server on PostgreSQL (scripts/temporal-server.sh) with Switchyard's store there too. */
  server?: 'dev' | 'real';
  /** The real server's history shards (default: the script's, 4). */
  shards?: number;
  /** Switchyard worker and API processes (default 1 each; separate processes only). */
  workers?: number;
  apis?: number;
  /** Also start these variants of Switchyard (VARIANT_SETTINGS), one worker and one API each. */
  variants?: VariantName[];
  /** Also start the design floor (the `design-floor` system). */
  designFloor?: boolean;
}

/** Process ids of the real server and its PostgreSQL postmaster, from the script's pid files. */
function realServerPids(real: RealTemporal): { temporal: number; postgres: number } {
  return {
    temporal: Number(readFileSync(path.join(real.dir, 'server.pid'), 'utf8').trim()),
    postgres: Number(readFileSync(path.join(real.dir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]),
  };
}

const floorOf = (floor: { taskQueue: string; ports: number[] }): FloorReference => ({ apiUrls: floor.ports.map((port) => `http://127.0.0.1:${port}`), taskQueue: floor.taskQueue, sourceId: FLOOR_SOURCE_ID });

/** `worker`, or `worker-1`, `worker-2`, ... when there are several. */
const roleNames = (role: string, count: number) => (count === 1 ? [role] : Array.from({ length: count }, (_, i) => `${role}-${i + 1}`));

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
  let real: RealTemporal | undefined;
  // The real server and its PostgreSQL run in the background (the script's nohup and pg_ctl), not as children.
  let realPids: { temporal: number; postgres: number } | undefined;
  // Whatever ends the bench (an error, Ctrl-C, a hung child), none of its processes outlive it.
  const killAll = () => {
    for (const [, child] of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    if (realPids) {
      // SIGQUIT: PostgreSQL's immediate shutdown (the postmaster stops its backends itself).
      for (const [pid, signal] of [[realPids.temporal, 'SIGKILL'], [realPids.postgres, 'SIGQUIT']] as const) {
        try {
          process.kill(pid, signal);
        } catch {
          // already gone
        }
      }
    }
  };
  process.once('exit', killAll);

  async function stop(): Promise<void> {
    await client?.connection.close().catch(() => undefined);
    // Clients of Temporal first, the server last.
    for (const [, child] of [...children].reverse()) await stopProcess(child, 'SIGTERM', 15_000);
    await real?.stop();
    process.off('exit', killAll);
  }

  try {
    let temporalAddress: string;
    let storeEnv: Record<string, string>;
    let dataBytes: (() => Promise<number>) | undefined;
    // Every process of the stack (Switchyard, bare, floor) and the bench's own client encrypt payloads
    // with one throwaway key, as production would, unless the environment brings keys or PAYLOAD_ENCRYPTION=off.
    const keysEnv: Record<string, string> = process.env.PAYLOAD_KEYS || process.env.PAYLOAD_KEYS_FILE ? {} : { PAYLOAD_KEYS: `bench-1=${randomBytes(32).toString('base64')}` };
    const dataConverter = switchyardDataConverter(loadKeyring(loadConfig({ ...process.env, ...keysEnv })));
    const connectClient = (address: string) => async () => {
      const connection = await Connection.connect({ address, connectTimeout: 1_000 });
      await connection.workflowService.getSystemInfo({});
      return new Client({ connection, namespace: NAMESPACE, dataConverter });
    };
    if (options.server === 'real') {
      const realDir = path.join(dir, 'temporal-server');
      log(`Temporal's real server (scripts/temporal-server.sh, ${options.shards ?? 4} history shards) on a throwaway PostgreSQL in ${path.relative(ROOT, realDir)}`);
      real = await startRealTemporal({ dir: realDir, shards: options.shards });
      realPids = realServerPids(real);
      temporalAddress = real.address;
      // Switchyard's store on the same PostgreSQL, as in production (docker-compose.yml).
      const serverUrl = `postgres://temporal:temporal@127.0.0.1:${real.pgPort}`;
      const storeUrl = await createTestDatabase('switchyard_bench', serverUrl);
      const storeName = new URL(storeUrl).pathname.slice(1);
      storeEnv = { DATABASE_URL: storeUrl };
      dataBytes = async () => {
        const db = new pg.Client({ connectionString: `${serverUrl}/postgres` });
        await db.connect();
        try {
          const { rows } = await db.query<{ bytes: string }>('SELECT sum(pg_database_size(datname))::text AS bytes FROM pg_database WHERE datname = ANY($1)', [['temporal', 'temporal_visibility', storeName]]);
          return Number(rows[0].bytes);
        } finally {
          await db.end();
        }
      };
      const realLog = real.logFile;
      const serverPid = realPids.temporal;
      const serverGone = () => {
        try {
          process.kill(serverPid, 0);
          return false;
        } catch {
          return `the real Temporal server exited; see ${realLog}`;
        }
      };
      client = await waitFor(connectClient(temporalAddress), 5 * 60_000, serverGone);
    } else {
      const temporalPort = await freePort();
      temporalAddress = `127.0.0.1:${temporalPort}`;
      log(`Temporal dev server on ${temporalAddress} (data in ${path.relative(ROOT, dir)})`);
      const temporalLog = path.join(dir, 'temporal.log');
      const temporal = startDevServer({ port: temporalPort, dbFile: path.join(dir, 'temporal.db'), headless: true, extraArgs: options.temporalFlags });
      children.push(['temporal', temporal]);
      const temporalLogStream = createWriteStream(temporalLog, { flags: 'a' });
      temporal.stdout?.pipe(temporalLogStream);
      temporal.stderr?.pipe(temporalLogStream);
      storeEnv = { DATABASE_PATH: path.join(dir, 'switchyard.db') };
      client = await waitFor(connectClient(temporalAddress), 15 * 60_000, () => exited(temporal, 'Temporal dev server', temporalLog));
    }

    const receiverLog = path.join(dir, 'receiver.log');
    const receiver = spawnTs('bench/receiver.ts', {}, receiverLog);
    children.push(['receiver', receiver]);
    const receiverPort = await new Promise<number>((resolve, reject) => {
      receiver.once('message', (message: { port?: number }) => (message.port ? resolve(message.port) : reject(new Error('receiver did not report its port'))));
      receiver.once('exit', (code) => reject(new Error(`receiver exited with ${code}; see ${receiverLog}`)));
    });
    receiver.on('message', forward);

    const adminToken = randomBytes(16).toString('hex');
    const workerCount = options.combined ? 1 : (options.workers ?? 1);
    const apiCount = options.combined ? 1 : (options.apis ?? 1);
    const apiPorts: number[] = [];
    for (let i = 0; i < apiCount; i++) apiPorts.push(await freePort());
    const apiPort = apiPorts[0];
    const switchyardEnv = {
      TEMPORAL_ADDRESS: temporalAddress,
      TEMPORAL_NAMESPACE: NAMESPACE,
      TEMPORAL_TASK_QUEUE: 'bench-switchyard',
      DATA_DIR: dir,
      ...storeEnv,
      ...keysEnv,
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
    // One folder per role and Node's own file names (pid, thread): with a fixed name, tsx's loader
    // thread and the workflow threads overwrote the main thread's profile.
    const profile = (name: string) => (options.cpuProfileDir ? ['--cpu-prof', '--cpu-prof-dir', path.join(options.cpuProfileDir, name)] : []);
    const workerLog = path.join(dir, 'worker.log');
    const apiLog = options.combined ? workerLog : path.join(dir, 'api.log');
    let worker: ChildProcess;
    let api: ChildProcess;
    // Every worker and API process, with its log; `worker` and `api` are the first of each.
    const workers: { child: ChildProcess; log: string }[] = [];
    const apis: { child: ChildProcess; log: string }[] = [];
    if (options.combined) {
      log('Switchyard worker and API in one process (src/main.ts, eager workflow starts)');
      // Metered as the worker; its CPU and memory include the API's.
      worker = api = spawnTs('src/main.ts', { ...switchyardEnv, EMBEDDED_TEMPORAL: 'false' }, workerLog, profile('worker'));
      children.push(['worker', worker]);
      workers.push({ child: worker, log: workerLog });
      apis.push({ child: api, log: apiLog });
    } else {
      log(`Switchyard worker${workerCount > 1 ? `s (${workerCount})` : ''} and API${apiCount > 1 ? `s (${apiCount})` : ''} (separate processes)`);
      for (const role of roleNames('worker', workerCount)) {
        const roleLog = workerCount === 1 ? workerLog : path.join(dir, `${role}.log`);
        const child = spawnTs('src/worker.ts', switchyardEnv, roleLog, profile(role));
        children.push([role, child]);
        workers.push({ child, log: roleLog });
      }
      for (const [i, role] of roleNames('api', apiCount).entries()) {
        const roleLog = apiCount === 1 ? apiLog : path.join(dir, `${role}.log`);
        const child = spawnTs('src/server.ts', { ...switchyardEnv, PORT: String(apiPorts[i]) }, roleLog, profile(role));
        children.push([role, child]);
        apis.push({ child, log: roleLog });
      }
      worker = workers[0].child;
      api = apis[0].child;
    }

    // Switchyard with one setting changed (PAYLOAD_ENCRYPTION=off: `plain`; ARCHIVE_RETENTION=0:
    // `unarchived`) on its own task queue, same store and receiver: what the setting costs is the
    // difference between the two in one run, on one server, under the same load.
    const variantProcesses: Partial<Record<VariantName, { worker: ChildProcess; api: ChildProcess; log: string; apiUrl: string; taskQueue: string }>> = {};
    for (const name of options.variants ?? []) {
      const port = await freePort();
      const env = { ...switchyardEnv, TEMPORAL_TASK_QUEUE: `bench-${name}`, PORT: String(port), ...VARIANT_SETTINGS[name] };
      const variantLog = path.join(dir, `${name}.log`);
      const variantWorker = spawnTs(options.combined ? 'src/main.ts' : 'src/worker.ts', { ...env, EMBEDDED_TEMPORAL: 'false' }, variantLog, profile(`${name}-worker`));
      children.push([`${name}Worker`, variantWorker]);
      const variantApi = options.combined ? variantWorker : spawnTs('src/server.ts', env, variantLog, profile(`${name}-api`));
      if (!options.combined) children.push([`${name}Api`, variantApi]);
      variantProcesses[name] = { worker: variantWorker, api: variantApi, log: variantLog, apiUrl: `http://127.0.0.1:${port}`, taskQueue: env.TEMPORAL_TASK_QUEUE };
    }

    const bareEnv = { ...switchyardEnv, TEMPORAL_TASK_QUEUE: 'bench-bare' };
    const bareLog = path.join(dir, 'bare-worker.log');
    const bare = spawnTs('bench/bare/bare-worker.ts', bareEnv, bareLog, profile('bare-worker'));
    children.push(['bareWorker', bare]);
    bare.on('message', forward);

    // The floors: the empty workflow (and, when asked, the design floor: the same with one no-op local
    // activity), started like a delivery, in the same process shape as Switchyard (as many workers and
    // APIs: each polls, keeps its caches and connections, and that is part of the shape).
    const floorLog = path.join(dir, 'floor.log');
    const startFloor = async (role: 'floor' | 'designFloor') => {
      const env = { ...switchyardEnv, TEMPORAL_TASK_QUEUE: role === 'floor' ? 'bench-floor' : 'bench-design-floor', FLOOR_SHAPE: role === 'floor' ? 'empty' : 'design', FLOOR_SOURCE_ID, FLOOR_DESTINATION_ID };
      const ports: number[] = [];
      const floorWorkers: ChildProcess[] = [];
      const floorApis: ChildProcess[] = [];
      for (const name of roleNames(`${role}Worker`, workerCount)) {
        const port = await freePort();
        const child = spawnTs('bench/floor/floor.ts', { ...env, PORT: String(port), FLOOR_ROLE: options.combined ? 'combined' : 'worker' }, floorLog, profile(name));
        children.push([name, child]);
        child.on('message', forward);
        floorWorkers.push(child);
        if (options.combined) {
          ports.push(port);
          floorApis.push(child);
        }
      }
      if (!options.combined) {
        for (const name of roleNames(`${role}Api`, apiCount)) {
          const port = await freePort();
          const child = spawnTs('bench/floor/floor.ts', { ...env, PORT: String(port), FLOOR_ROLE: 'api' }, floorLog, profile(name));
          children.push([name, child]);
          ports.push(port);
          floorApis.push(child);
        }
      }
      return { taskQueue: env.TEMPORAL_TASK_QUEUE, ports, workers: floorWorkers, apis: floorApis };
    };
    const floors = [await startFloor('floor'), ...(options.designFloor ? [await startFloor('designFloor')] : [])];

    await waitForPoller(temporalAddress, NAMESPACE, switchyardEnv.TEMPORAL_TASK_QUEUE, worker);
    await waitForPoller(temporalAddress, NAMESPACE, bareEnv.TEMPORAL_TASK_QUEUE, bare);
    for (const variant of Object.values(variantProcesses)) await waitForPoller(temporalAddress, NAMESPACE, variant.taskQueue, variant.worker);
    for (const floor of floors) {
      await waitForPoller(temporalAddress, NAMESPACE, floor.taskQueue, floor.workers[0]);
      for (const [i, port] of floor.ports.entries()) {
        await waitFor(async () => {
          const response = await request(`http://127.0.0.1:${port}/v1/batch`, { method: 'POST', body: '{"batch":[]}' });
          await response.body.dump();
        }, 120_000, () => exited(floor.apis[i], 'floor API', floorLog));
      }
    }
    // Each worker polls under its own identity (pid@host): wait until every one of them does.
    const everyWorkerPolls = async (queue: string, processes: ChildProcess[], logFile: (i: number) => string) => {
      if (processes.length < 2) return;
      await waitFor(async () => {
        const { pollers } = await client!.connection.workflowService.describeTaskQueue({ namespace: NAMESPACE, taskQueue: { name: queue } });
        const identities = new Set((pollers ?? []).map((p) => p.identity));
        if (identities.size < processes.length) throw new Error(`${identities.size} of ${processes.length} workers poll ${queue}`);
      }, 180_000, () => processes.map((child, i) => exited(child, 'worker', logFile(i))).find(Boolean) ?? false);
    };
    await everyWorkerPolls(switchyardEnv.TEMPORAL_TASK_QUEUE, workers.map((w) => w.child), (i) => workers[i].log);
    for (const floor of floors) await everyWorkerPolls(floor.taskQueue, floor.workers, () => floorLog);
    const apiUrls = apiPorts.map((port) => `http://127.0.0.1:${port}`);
    const apiUrl = apiUrls[0];
    const healthy = (url: string) => async () => {
      const response = await request(`${url}/health`);
      await response.body.dump();
      if (response.statusCode !== 200) throw new Error(`/health answered ${response.statusCode}`);
    };
    for (const [i, url] of apiUrls.entries()) await waitFor(healthy(url), 120_000, () => exited(apis[i].child, 'API', apis[i].log));
    for (const [name, variant] of Object.entries(variantProcesses)) await waitFor(healthy(variant.apiUrl), 120_000, () => exited(variant.api, `${name} API`, variant.log));

    const adminRequest = async <T>(method: 'GET' | 'POST' | 'PUT', url: string, body?: unknown): Promise<T> => {
      const response = await request(`${apiUrl}${url}`, {
        method,
        headers: { authorization: `Bearer ${adminToken}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
      const reply = (await response.body.json()) as T;
      if (response.statusCode >= 300) throw new Error(`${method} ${url} answered ${response.statusCode}: ${JSON.stringify(reply)}`);
      return reply;
    };
    const admin = async <T>(url: string, body: unknown, base = apiUrl): Promise<T> => {
      const response = await request(`${base}${url}`, {
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
    // The same destination with the highest rate limit there is: the shared limiter is asked before every
    // attempt and never makes one wait at these rates, so the difference is what asking costs.
    const limited = await admin<{ id: string; writeKey: string }>('/admin/sources', { name: 'bench rate-limited' });
    await admin(`/admin/sources/${limited.id}/destinations`, { enabled: true, sharedSecret: 'bench-secret', maxRequestsPerSecond: MAX_REQUESTS_PER_SECOND_LIMIT, webhooks: [{ url: `http://127.0.0.1:${receiverPort}/hook` }] });

    // Consent and filters at ingest, priced: consent categories and 10 filters, none of which stops a bench message.
    const governed = await admin<{ id: string; writeKey: string }>('/admin/sources', { name: 'bench governed' });
    const governedDestination = await admin<{ id: string }>(`/admin/sources/${governed.id}/destinations`, { enabled: true, sharedSecret: 'bench-secret', consent: GOVERNED_CONSENT, webhooks: [{ url: `http://127.0.0.1:${receiverPort}/hook` }] });
    for (const filter of GOVERNED_FILTERS) await admin(`/admin/destinations/${governedDestination.id}/filters`, filter);
    // Actions destinations, priced: two mappings, two requests per message.
    const mapped = await admin<{ id: string; writeKey: string }>('/admin/sources', { name: 'bench mapped' });
    await admin(`/admin/sources/${mapped.id}/destinations`, mappedDestination(`http://127.0.0.1:${receiverPort}/hook`));
    // Functions, priced: an insert function before a webhook, and a destination function whose fetch delivers.
    const inserted = await insertedSource(admin, `http://127.0.0.1:${receiverPort}/hook`);
    const scripted = await scriptedSource(admin, `http://127.0.0.1:${receiverPort}/hook`);
    // Tracking plans, priced: 50 rules connected to the source, decided for every message
    // at ingest under the default controls (report only); the bench's messages meet their rule.
    const planned = await admin<{ id: string; writeKey: string }>('/admin/sources', { name: 'bench planned' });
    await admin(`/admin/sources/${planned.id}/destinations`, { enabled: true, sharedSecret: 'bench-secret', webhooks: [{ url: `http://127.0.0.1:${receiverPort}/hook` }] });
    const plan = await admin<{ id: string }>('/admin/tracking-plans', { name: 'bench plan' });
    await adminRequest('PUT', `/admin/tracking-plans/${plan.id}/rules`, { rules: planRules(['Order Completed', ...Array.from({ length: PLAN_RULES - 2 }, (_, i) => `Event ${i + 1}`)]) });
    await admin(`/admin/tracking-plans/${plan.id}/sources`, { sourceId: planned.id });

    // Each variant makes its own source through its own API: a keyed API seals a destination's
    // credentials, which processes without keys cannot open.
    const variants: BenchStack['variants'] = {};
    for (const [name, variant] of Object.entries(variantProcesses) as [VariantName, (typeof variantProcesses)[VariantName] & object][]) {
      const variantSource = await admin<{ id: string; writeKey: string }>('/admin/sources', { name: `bench ${name}` }, variant.apiUrl);
      await admin(`/admin/sources/${variantSource.id}/destinations`, { enabled: true, sharedSecret: 'bench-secret', webhooks: [{ url: `http://127.0.0.1:${receiverPort}/hook` }] }, variant.apiUrl);
      variants[name] = { apiUrl: variant.apiUrl, taskQueue: variant.taskQueue, writeKey: variantSource.writeKey, sourceId: variantSource.id };
    }

    return {
      dir,
      temporalAddress,
      client,
      receiverUrl: `http://127.0.0.1:${receiverPort}/hook`,
      switchyard: { apiUrl, apiUrls, writeKey: source.writeKey, sourceId: source.id, taskQueue: switchyardEnv.TEMPORAL_TASK_QUEUE },
      bare: { taskQueue: bareEnv.TEMPORAL_TASK_QUEUE },
      variants,
      limited: { writeKey: limited.writeKey, sourceId: limited.id },
      governed: { writeKey: governed.writeKey, sourceId: governed.id },
      mapped: { writeKey: mapped.writeKey, sourceId: mapped.id },
      inserted: { writeKey: inserted.writeKey, sourceId: inserted.id },
      scripted: { writeKey: scripted.writeKey, sourceId: scripted.id },
      planned: { writeKey: planned.writeKey, sourceId: planned.id },
      floor: floorOf(floors[0]),
      ...(floors[1] && { designFloor: floorOf(floors[1]) }),
      pids: { sender: process.pid, ...Object.fromEntries(children.map(([role, child]) => [role, child.pid!])), ...realPids },
      // The dev server runs under scripts/temporal-dev.sh's bash; PostgreSQL forks a backend per connection.
      processTrees: new Set(['temporal', 'postgres']),
      dataBytes,
      onReceipts: (listener) => void listeners.push(listener),
      receiverConnections: () => receiverConnections,
      settings: {
        ...Object.fromEntries(['LOG_LEVEL', 'INGEST_RATE_LIMIT', 'INGEST_START_CONCURRENCY', 'INGEST_START_TIMEOUT', 'WORKER_MAX_IN_FLIGHT_PER_WEBHOOK', 'EGRESS_ALLOWLIST'].map((key) => [key, switchyardEnv[key as keyof typeof switchyardEnv]])),
        // The real server's tuning knobs (scripts/temporal-server.sh), when set.
        ...Object.fromEntries(
          ['TEMPORAL_RETENTION', 'TEMPORAL_PG_SETTINGS', 'TEMPORAL_DYNAMIC_CONFIG_EXTRA', 'TEMPORAL_PG_MAX_CONNS', 'TEMPORAL_PG_VISIBILITY_MAX_CONNS', 'TEMPORAL_SERVER_METRICS', 'TEMPORAL_PG_PLUGIN', 'TEMPORAL_PG_SOCKET'].flatMap((key) => (real && process.env[key] !== undefined ? [[key, process.env[key]]] : [])),
        ),
      },
      async addSource(name, webhookUrl) {
        const added = await admin<{ id: string; writeKey: string }>('/admin/sources', { name });
        await admin(`/admin/sources/${added.id}/destinations`, { enabled: true, webhooks: [{ url: webhookUrl }] });
        return { sourceId: added.id, writeKey: added.writeKey };
      },
      adminRequest,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
