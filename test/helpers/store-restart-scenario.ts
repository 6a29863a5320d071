import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { startOwnApi, startOwnWorker, stopProcess, sleep, type OwnApi, type OwnWorker } from './faults';
import { createTestDatabase, startPostgres } from './postgres';
import { ADMIN_TOKEN, sourceThrough } from './production-shape';
import { startReceiver, type Receiver } from './receiver';
import { receipts, waitForAll, type Log } from './scenarios';
import { basicAuth } from './system';

/**
 * Issue 21: Switchyard's store PostgreSQL restarted under steady single calls, once as a crash
 * (`immediate`) and once as an orderly stop (`fast`), with an API and a worker process of the
 * scenario's own on a PostgreSQL of its own (the run's shared one is never touched). While the
 * database is away every call must get a clear 503 with Retry-After (never a 500, never a hang),
 * no process may die (a pooled connection checked out at the restart used to end the process with
 * an unhandled 'error' event), `/health` must say the store is away and then that it is back, and
 * every acknowledged call must be delivered.
 */

export interface StoreRestartFigures {
  calls: number;
  /** Replies by HTTP status; `hung` is a call without a reply within CALL_TIMEOUT_MS. */
  statuses: Record<string, number>;
  /** 503 replies without a Retry-After header. */
  unavailableWithoutRetryAfter: number;
  /** Codes of the 503 replies (`store_unavailable`, `temporal_unavailable`). */
  unavailableCodes: string[];
  acked: number;
  delivered: number;
  lost: number;
  /** Deliveries beyond one per acknowledged message. */
  duplicates: number;
  /** Messages delivered more than once with bodies that differ (must be none: a re-sent attempt is the same bytes). */
  duplicatesThatDiffer: number;
  /** Longest time from a call's 200 to its first delivery. */
  maxDelayMs: number;
  /** Per restart: from PostgreSQL accepting connections again to the first call sent after that answered 200. */
  recoveryMs: number[];
  /** Per restart: /health statuses and `store` values seen while PostgreSQL was away, and the first after it was back. */
  healthWhileDown: { status: number; store?: boolean }[][];
  healthAfter: { status: number; store?: boolean }[];
  /** Per API and per worker process, comma-separated: `running` when alive at the end, else how it exited. */
  api: string;
  worker: string;
}

const CALL_TIMEOUT_MS = 15_000;

/**
 * Longest wait from PostgreSQL accepting connections to a call answered 200. Tens of milliseconds on
 * a quiet box (docs/reliability.md); the bound is generous because every pool reconnects at once,
 * each with a SCRAM handshake, and a 2-core box running other suites beside can take seconds. A pool
 * that never recovers, or waits for a timeout of its own, fails it.
 */
export const RECOVERY_BOUND_MS = 30_000;

export async function storeRestartScenario(options: { dir: string; rate: number; seconds: number; restarts: ('fast' | 'immediate')[]; downMs: number; log?: Log }): Promise<StoreRestartFigures> {
  const postgres = await startPostgres(path.join(options.dir, 'postgres'));
  const receiver = await startReceiver();
  const databaseUrl = await createTestDatabase('switchyard_restart', postgres.url);
  const env = { DATABASE_URL: databaseUrl, TEMPORAL_TASK_QUEUE: `store-restart-${process.pid}-${Date.now()}` };
  const api = await startOwnApi({ ...env, ADMIN_TOKEN, INGEST_RATE_LIMIT: '0', DELIVERY_TIMEOUT: '2s', DELIVERY_INITIAL_BACKOFF: '200ms', DELIVERY_MAX_BACKOFF: '2s', DELIVERY_RETRY_WINDOW: '15m' }, path.join(options.dir, 'api.log'));
  const worker = await startOwnWorker(env, path.join(options.dir, 'worker.log'));
  try {
    return await postgresRestartDrill({ ...options, apis: [api], workers: [worker], receiver, restart: (mode, downMs) => postgres.restart(mode, downMs) });
  } finally {
    await stopProcess(worker.process);
    await stopProcess(api.process);
    await receiver.close();
    await postgres.stop();
  }
}

/**
 * The drill itself, on processes someone else started: single calls at `rate` per second for
 * `seconds`, spread over the APIs in turn, with PostgreSQL restarted (`restart`) at even intervals.
 */
export async function postgresRestartDrill(options: { apis: OwnApi[]; workers: OwnWorker[]; receiver: Receiver; restart: (mode: 'fast' | 'immediate', downMs: number) => Promise<void>; rate: number; seconds: number; restarts: ('fast' | 'immediate')[]; downMs: number; log?: Log }): Promise<StoreRestartFigures> {
  const log = options.log ?? (() => undefined);
  const { apis, workers, receiver } = options;
  const { writeKey } = await sourceThrough(apis[0], `postgres-restart-${Date.now()}`, receiver.url);
  const statuses: Record<string, number> = {};
  const unavailableCodes = new Set<string>();
  let unavailableWithoutRetryAfter = 0;
  const ackedAt = new Map<string, number>();
  const oks: { sentAt: number }[] = [];

  const run = Date.now().toString(36);
  const call = async (i: number) => {
    const messageId = `pg-restart-${run}-${i}`;
    const sentAt = Date.now();
    let status = 'hung';
    try {
      const res = await fetch(`${apis[i % apis.length].url}/v1/track`, {
        method: 'POST',
        headers: { authorization: basicAuth(writeKey), 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'track', userId: `user-${i % 7}`, event: 'Store Restart', messageId, properties: { i } }),
        signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
      });
      status = String(res.status);
      const body = (await res.json().catch(() => ({}))) as { code?: string };
      if (res.status === 200) {
        ackedAt.set(messageId, Date.now());
        oks.push({ sentAt });
      }
      if (res.status === 503) {
        unavailableCodes.add(body.code ?? 'none');
        if (!res.headers.get('retry-after')) unavailableWithoutRetryAfter++;
      }
    } catch (err) {
      status = (err as Error).name === 'TimeoutError' ? 'hung' : `error:${(err as Error).message}`;
    }
    statuses[status] = (statuses[status] ?? 0) + 1;
  };

  // Open loop: a call every 1/rate s whatever the replies, as many independent senders would.
  const calls: Promise<void>[] = [];
  const started = Date.now();
  const total = options.rate * options.seconds;
  const sending = (async () => {
    for (let i = 0; i < total; i++) {
      const due = started + (i * 1000) / options.rate;
      if (due > Date.now()) await sleep(due - Date.now());
      calls.push(call(i));
    }
  })();

  const health = async () => {
    const res = await fetch(`${apis[0].url}/health`, { signal: AbortSignal.timeout(CALL_TIMEOUT_MS) });
    return { status: res.status, store: ((await res.json()) as { store?: boolean }).store };
  };
  const upTimes: number[] = [];
  const healthWhileDown: { status: number; store?: boolean }[][] = [];
  const healthAfter: { status: number; store?: boolean }[] = [];
  const gap = (options.seconds * 1000) / (options.restarts.length + 1);
  for (const [n, mode] of options.restarts.entries()) {
    await sleep(Math.max(0, started + gap * (n + 1) - Date.now()));
    log(`  restarting PostgreSQL (${mode})`);
    const seen: { status: number; store?: boolean }[] = [];
    let restarting = true;
    const polling = (async () => {
      while (restarting) {
        seen.push(await health().catch(() => ({ status: 0 })));
        await sleep(250);
      }
    })();
    await options.restart(mode, options.downMs);
    restarting = false;
    await polling;
    upTimes.push(Date.now());
    healthWhileDown.push(seen);
    const after = Date.now();
    let reply = await health();
    while (reply.status !== 200 && Date.now() - after < 20_000) {
      await sleep(250);
      reply = await health();
    }
    healthAfter.push(reply);
  }
  await sending;
  await Promise.all(calls);

  const acked = [...ackedAt.keys()];
  await waitForAll(receiver, acked, 120_000, log).catch((err: Error) => log(`  ${err.message}`));
  const got = receipts(receiver);
  const delays = acked.filter((id) => got.has(id)).map((id) => got.get(id)![0].at - ackedAt.get(id)!);
  return {
    calls: total,
    statuses,
    unavailableWithoutRetryAfter,
    unavailableCodes: [...unavailableCodes].sort(),
    acked: acked.length,
    delivered: acked.filter((id) => got.has(id)).length,
    lost: acked.filter((id) => !got.has(id)).length,
    duplicates: acked.reduce((sum, id) => sum + Math.max(0, (got.get(id)?.length ?? 0) - 1), 0),
    duplicatesThatDiffer: acked.filter((id) => new Set((got.get(id) ?? []).map((r) => r.body)).size > 1).length,
    maxDelayMs: Math.max(0, ...delays),
    recoveryMs: upTimes.map((up) => {
      const first = oks.filter((ok) => ok.sentAt >= up).sort((a, b) => a.sentAt - b.sentAt)[0];
      return first ? first.sentAt - up : -1;
    }),
    healthWhileDown,
    healthAfter,
    api: processState(apis),
    worker: processState(workers),
  };
}

const processState = (children: { process: ChildProcess }[]) =>
  children.map(({ process: child }) => (child.exitCode === null && child.signalCode === null ? 'running' : `exited ${child.exitCode ?? child.signalCode}`)).join(', ');

/** The rules a store restart run broke, in words; empty when it kept every one (the test asserts each on its own). */
export function storeRestartBroken(f: StoreRestartFigures): string[] {
  const broken: string[] = [];
  if (/exited/.test(f.api) || /exited/.test(f.worker)) broken.push(`a process ended (API ${f.api}, worker ${f.worker})`);
  const others = Object.keys(f.statuses).filter((s) => s !== '200' && s !== '503');
  if (others.length > 0) broken.push(`replies other than 200/503: ${others.map((s) => `${s} ×${f.statuses[s]}`).join(', ')}`);
  if (f.unavailableWithoutRetryAfter > 0) broken.push(`${f.unavailableWithoutRetryAfter} 503s without Retry-After`);
  if (f.healthWhileDown.some((seen) => !seen.some((h) => h.status === 503 && h.store === false))) broken.push('/health never said the store was away');
  if (f.healthAfter.some((h) => h.status !== 200 || h.store !== true)) broken.push('/health did not come back to 200');
  if (f.recoveryMs.some((ms) => ms < 0 || ms >= RECOVERY_BOUND_MS)) broken.push(`recovery took ${f.recoveryMs.join('/')} ms`);
  if (f.lost > 0) broken.push(`${f.lost} acknowledged calls not delivered`);
  if (f.duplicatesThatDiffer > 0) broken.push(`${f.duplicatesThatDiffer} messages delivered twice with different bodies`);
  return broken;
}
