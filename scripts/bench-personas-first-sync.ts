/**
 * Measures the first sync of a large audience end to end, on the real pieces: a Temporal dev server
 * (SQLite file), one worker process (src/worker.ts), the SQLite store and a local HTTP receiver.
 *
 *   npx tsx scripts/bench-personas-first-sync.ts [--profiles 100000] [--page-size 500]
 *       [--temporal file|wal|memory] [--until delivered|commit] [--keep]
 *
 * Seeds N profiles through the same store call ingestion uses (an identify and two tracks each),
 * creates an audience every profile belongs to, starts its first sync and reports:
 *   - the audience query (preparePersonasSync: SQL into the changes table),
 *   - the sync (all N delivery workflows started, snapshot committed), its pages and runs,
 *   - the time until the receiver got all N identify calls,
 *   - the worker's peak resident memory (VmHWM) until the sync committed and until all were delivered.
 * Everything lives in a temporary folder, removed at the end unless --keep.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { acceptCalls } from '../src/messages/accept-calls';
import { profileUpdates } from '../src/personas/profile-updates';
import { parseKeyring } from '../src/privacy/keyring';
import { openStore } from '../src/store';
import { switchyardDataConverter } from '../src/temporal/data-converter';
import { temporalSyncSchedules } from '../src/temporal/temporal-sync-schedules';
import type { PersonasSyncReport } from '../src/workflows/personas-sync';

const ROOT = path.resolve(__dirname, '..');
const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
};
const PROFILES = Number(arg('profiles', '100000'));
const PAGE_SIZE = arg('page-size', '500');
const KEEP = process.argv.includes('--keep');
/** file: the dev server as `npm start` runs it (WAL, synchronous=FULL); wal: the same with synchronous=NORMAL; memory: no file. */
const TEMPORAL = arg('temporal', 'file');
/** delivered: also wait until the receiver has every identify call; commit: stop when the sync committed. */
const UNTIL = arg('until', 'delivered');
const SEED_BATCH = 1_000;

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const mib = (kib: number) => `${(kib / 1024).toFixed(0)} MiB`;

/** The Temporal dev server through scripts/temporal-dev.sh (which registers Switchyard's search attributes). */
function startTemporal(port: number, dir: string): ChildProcess {
  const args = ['--port', String(port), '--headless', '--log-level', 'warn'];
  if (TEMPORAL !== 'memory') args.push('--db-filename', path.join(dir, 'temporal.db'));
  if (TEMPORAL === 'wal') args.push('--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=normal');
  return spawn('bash', [path.join(ROOT, 'scripts/temporal-dev.sh'), ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = http.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Peak and current resident set size of a process, in KiB (Linux /proc). */
function memory(pid: number): { peak: number; now: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { peak: field('VmHWM'), now: field('VmRSS') };
}

async function waitFor(check: () => Promise<boolean> | boolean, timeoutMs: number, what: string): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await Promise.resolve().then(check).catch(() => false))) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const children: ChildProcess[] = [];
const dir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-bench-'));

/** Interrupted (Ctrl-C, a job stopped): take the server and the worker down too, they would outlive us. */
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    for (const child of children) child.kill('SIGKILL');
    if (!KEEP) rmSync(dir, { recursive: true, force: true });
    process.exit(130);
  });
}

async function main(): Promise<void> {
  const receiver = http.createServer();
  try {
    const port = await freePort();
    const address = `127.0.0.1:${port}`;
    const databasePath = path.join(dir, 'switchyard.db');
    const taskQueue = 'switchyard-bench';
    const temporal = startTemporal(port, dir);
    children.push(temporal);
    temporal.stdout?.pipe(createWriteStream(path.join(dir, 'temporal.log')));
    temporal.stderr?.pipe(createWriteStream(path.join(dir, 'temporal.log')));

    let received = 0;
    receiver.on('request', (req, res) => {
      req.resume();
      req.on('end', () => {
        received++;
        res.writeHead(200).end('{}');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

    const store = await openStore({ databasePath });
    const { source } = await store.sources.create('bench');
    // Off while seeding: the receiver then counts only the sync's identify calls.
    const destination = await store.destinations.create(source.id, { enabled: false, webhooks: [{ url: receiverUrl, headers: {} }] });

    const seedStarted = Date.now();
    for (let from = 0; from < PROFILES; from += SEED_BATCH) {
      const calls = [];
      for (let i = from; i < Math.min(from + SEED_BATCH, PROFILES); i++) {
        const userId = `user-${String(i).padStart(7, '0')}`;
        calls.push({ type: 'identify' as const, fields: { userId, traits: { plan: i % 2 ? 'pro' : 'free', n: i } } });
        for (const k of [1, 2]) calls.push({ type: 'track' as const, fields: { userId, event: 'Order Completed', properties: { total: (i % 97) + k }, messageId: `${userId}-${k}` } });
      }
      const acceptance = acceptCalls(calls, { receivedAtMs: Date.now() });
      if ('problem' in acceptance) throw new Error(acceptance.problem);
      await store.personas.profiles.record(source.id, profileUpdates(acceptance.accepted.map((a) => a.message)));
    }
    const seedMs = Date.now() - seedStarted;
    console.error(`seeded ${PROFILES} profiles in ${seconds(seedMs)}`);
    await store.destinations.update(destination.id, { enabled: true });

    const connection = await (async () => {
      for (const until = Date.now() + 15 * 60_000; ; ) {
        try {
          const c = await Connection.connect({ address, connectTimeout: 1_000 });
          await c.workflowService.getSystemInfo({});
          return c;
        } catch (err) {
          if (Date.now() > until) throw err;
          await new Promise((resolve) => setTimeout(resolve, 500));
        }
      }
    })();
    // The worker and this client share one throwaway payload key, as a deployment's processes would.
    const payloadKeys = `bench-1=${randomBytes(32).toString('base64')}`;
    const client = new Client({ connection, namespace: 'default', dataConverter: switchyardDataConverter(parseKeyring(payloadKeys)) });

    const worker = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/worker.ts')], {
      cwd: ROOT,
      env: { ...process.env, TEMPORAL_ADDRESS: address, TEMPORAL_TASK_QUEUE: taskQueue, DATABASE_PATH: databasePath, DATA_DIR: dir, EGRESS_ALLOWLIST: '127.0.0.0/8', LOG_LEVEL: 'warn', PERSONAS_SYNC_PAGE_SIZE: PAGE_SIZE, PAYLOAD_KEYS: payloadKeys, PAYLOAD_KEYS_FILE: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(worker);
    worker.stdout?.pipe(createWriteStream(path.join(dir, 'worker.log')));
    worker.stderr?.pipe(createWriteStream(path.join(dir, 'worker.log')));
    await waitFor(async () => ((await connection.workflowService.describeTaskQueue({ namespace: 'default', taskQueue: { name: taskQueue } })).pollers ?? []).length > 0, 180_000, 'the worker to poll');
    const idle = memory(worker.pid!);

    const definition = { all: [{ trait: 'plan', op: 'exists' }, { event: 'Order Completed', within: '30d', count: { op: 'gte', value: 2 } }] };
    const audience = await store.personas.audiences.create(source.id, { name: 'Bench Audience', key: 'bench_audience', definition: definition as never, schedule: '0 0 1 1 *', paused: true });
    const schedules = temporalSyncSchedules(client, taskQueue);
    const sync = { computation: { kind: 'audience' as const, id: audience.id }, sourceId: source.id, name: audience.name, schedule: audience.schedule, paused: true };
    await schedules.create(sync);

    let peakDuringSync = idle.peak;
    const sampler = setInterval(() => {
      try {
        peakDuringSync = Math.max(peakDuringSync, memory(worker.pid!).now);
      } catch {
        /* the worker exited; reported below */
      }
    }, 100);
    const started = Date.now();
    const { workflowId, runId } = await schedules.syncNow(sync);
    const report = (await client.workflow.getHandle(workflowId, runId).result()) as PersonasSyncReport;
    const syncMs = Date.now() - started;
    console.error(`sync committed after ${seconds(syncMs)}: ${JSON.stringify(report)}; ${received} received so far`);
    const atCommit = memory(worker.pid!);
    clearInterval(sampler);

    // The audience query: preparePersonasSync in the first run's history.
    let prepareMs = NaN;
    const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    const scheduled = history.events?.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'preparePersonasSync');
    const completed = history.events?.find((e) => e.activityTaskCompletedEventAttributes && String(e.activityTaskCompletedEventAttributes.scheduledEventId) === String(scheduled?.eventId));
    if (scheduled?.eventTime && completed?.eventTime) {
      const ms = (t: { seconds?: unknown; nanos?: number | null }) => Number(t.seconds) * 1000 + (t.nanos ?? 0) / 1e6;
      prepareMs = ms(completed.eventTime) - ms(scheduled.eventTime);
    }

    const receivedAtCommit = received;
    if (UNTIL === 'delivered') await waitFor(() => received >= report.changes, 24 * 60 * 60_000, 'every identify to reach the receiver');
    const deliveredMs = Date.now() - started;
    const atEnd = memory(worker.pid!);

    const lines = [
      `profiles: ${PROFILES} (plus ${2 * PROFILES} track events), seeded through the ingestion store call in ${seconds(seedMs)}`,
      `audience members: ${report.changes}; page size ${PAGE_SIZE}; ${report.pages} pages in ${report.runs} workflow runs (continue-as-new)`,
      `audience query (preparePersonasSync): ${seconds(prepareMs)}`,
      `first sync, start to commit (all delivery workflows started): ${seconds(syncMs)}; status ${report.status}, started ${report.started}, existing ${report.existing}`,
      `identify calls received: ${receivedAtCommit} when the sync committed; ${UNTIL === 'delivered' ? `all ${report.changes} after ${seconds(deliveredMs)}` : `${received} (not waited for)`}`,
      `worker resident memory: ${mib(idle.now)} idle; peak ${mib(Math.max(peakDuringSync, atCommit.now))} until the commit (sampled every 100 ms); peak ${mib(atEnd.peak)} (VmHWM) until the end`,
      `Temporal dev server persistence: ${TEMPORAL}; load average at the end ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}; node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${mib(os.totalmem() / 1024)} RAM`,
    ];
    console.log(lines.join('\n'));
    await connection.close();
    await store.close();
  } finally {
    for (const child of children.reverse()) {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
    }
    receiver.close();
    if (KEEP) console.log(`data kept in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
