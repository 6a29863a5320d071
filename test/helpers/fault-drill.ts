import type { ChildProcess } from 'node:child_process';
import { ADMIN_TOKEN, sleep, type OwnApi, type OwnWorker } from './faults';
import { sourceThrough } from './production-shape';
import type { Receiver } from './receiver';
import { receipts, waitForAll, type Log } from './scenarios';
import { waitFor } from './processes';
import { basicAuth } from './system';

/**
 * The fault matrix (docs/reliability.md), one drill for every fault: single calls at a steady rate through real
 * API processes (open loop, each with a timeout), one or more faults applied at even intervals
 * while they run, then a count of what was acknowledged, delivered, duplicated and how long the
 * service took to come back. A fault is whatever `apply` does (restart a PostgreSQL, cut a TCP relay
 * for a while): it resolves once the fault is over.
 */

export interface Fault {
  name: string;
  /** Injects the fault and resolves once it is healed. */
  apply(drill: DrillContext): Promise<void>;
  /** What /health and /admin/status must show at least once while the fault lasts (absent: no rule). */
  shows?: (reading: HealthReading) => boolean;
}

/** What a fault may ask of the drill running it. */
export interface DrillContext {
  /** Calls to the API at `url` sent and not answered yet. */
  inFlight(url: string): number;
}

/** /health's status (what a load balancer sees) beside /admin/status's view of the store and Temporal. */
export interface HealthReading {
  status: number;
  store?: boolean;
  temporal?: boolean;
  /** What /admin/status said is wrong. */
  problems?: string[];
}

export interface FaultFigures {
  name: string;
  /** /health readings taken while the fault lasted. */
  healthWhileDown: HealthReading[];
  /** Whether /health showed the fault as `Fault.shows` says (null: no rule). */
  showed: boolean | null;
  /** The first /health reading of 200 after it, or the last reading when none came within 30 s. */
  healthAfter: HealthReading;
  /** From the fault's end to the first call sent after it that answered 200; -1 if none did. */
  recoveryMs: number;
  /** The calls sent from this fault's start to the next one's (the last: to the drill's end), and what became of them. */
  window: WindowFigures;
}

export interface WindowFigures {
  calls: number;
  /** Answered 503 (not accepted: the sender keeps the message and retries later). */
  refused: number;
  acked: number;
  delivered: number;
  duplicates: number;
  maxDelayMs: number;
}

export interface DrillFigures {
  calls: number;
  /** Replies by HTTP status; `hung` is a call without a reply within CALL_TIMEOUT_MS. */
  statuses: Record<string, number>;
  /** Sends that failed with a connection error (refused, reset: an API killed mid-request) and were sent again. */
  connectionErrors: number;
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
  faults: FaultFigures[];
  /** Per API and per worker process, comma-separated: `running` when alive at the end, else how it exited. */
  api: string;
  worker: string;
}

export const CALL_TIMEOUT_MS = 15_000;

/**
 * Longest wait from a fault's end to a call answered 200. Tens of milliseconds on a quiet box
 * (docs/reliability.md); the bound is generous because every pool and connection comes back at
 * once (PostgreSQL: a SCRAM handshake each), and a 2-core box running other suites beside can take
 * seconds. A process that never recovers, or waits for a timeout of its own, fails it.
 */
export const RECOVERY_BOUND_MS = 30_000;

export async function faultDrill(options: { apis: OwnApi[]; workers: OwnWorker[]; receiver: Receiver; rate: number; seconds: number; faults: Fault[]; log?: Log }): Promise<DrillFigures> {
  const log = options.log ?? (() => undefined);
  const { apis, workers, receiver } = options;
  const run = Date.now().toString(36);
  const { writeKey } = await sourceThrough(apis[0], `drill-${run}`, receiver.url);
  const statuses: Record<string, number> = {};
  const unavailableCodes = new Set<string>();
  let unavailableWithoutRetryAfter = 0;
  const ackedAt = new Map<string, number>();
  const oks: { sentAt: number }[] = [];
  const sent: { messageId: string; sentAt: number; status?: string }[] = [];
  const inFlight = new Map<string, number>();
  let connectionErrors = 0;

  /**
   * One send; a connection error (refused, reset) is sent again to the next API, as Segment's
   * libraries retry and a load balancer routes around a dead instance, until CALL_TIMEOUT_MS.
   */
  const send = async (i: number, body: string, deadline: number): Promise<Response> => {
    for (let attempt = 0; ; attempt++) {
      const url = apis[(i + attempt) % apis.length].url;
      inFlight.set(url, (inFlight.get(url) ?? 0) + 1);
      try {
        return await fetch(`${url}/v1/track`, {
          method: 'POST',
          headers: { authorization: basicAuth(writeKey), 'content-type': 'application/json' },
          body,
          signal: AbortSignal.timeout(Math.max(1, deadline - Date.now())),
        });
      } catch (err) {
        if ((err as Error).name === 'TimeoutError' || Date.now() >= deadline) throw err;
        connectionErrors++;
        await sleep(100);
      } finally {
        inFlight.set(url, inFlight.get(url)! - 1);
      }
    }
  };

  const call = async (i: number) => {
    const messageId = `drill-${run}-${i}`;
    const sentAt = Date.now();
    const record: (typeof sent)[number] = { messageId, sentAt };
    sent.push(record);
    let status: string;
    try {
      const payload = JSON.stringify({ type: 'track', userId: `user-${i % 7}`, event: 'Fault Drill', messageId, properties: { i } });
      const res = await send(i, payload, sentAt + CALL_TIMEOUT_MS);
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
    record.status = status;
  };

  // Open loop: a call every 1/rate s whatever the replies, as many independent senders would. It
  // goes on past `seconds` until a call sent after the last fault ended was answered 200 (or the
  // recovery bound passed), so a late last fault still has calls to measure its recovery by.
  // Warm-up, not counted: each API's first call pays for its first connections and code paths,
  // which on a loaded 2-core box has taken longer than a call's timeout. The drill measures faults.
  await Promise.all(apis.map((api) => sourceThrough(api, `drill-${run}-warm`, receiver.url)));

  const calls: Promise<void>[] = [];
  const started = Date.now();
  const total = options.rate * options.seconds;
  const endedAt: number[] = [];
  const startedAt: number[] = [];
  const recovered = () => {
    const lastEnd = endedAt.length === options.faults.length ? endedAt[endedAt.length - 1] : undefined;
    return lastEnd !== undefined && (oks.some((ok) => ok.sentAt >= lastEnd) || Date.now() - lastEnd >= RECOVERY_BOUND_MS);
  };
  const sending = (async () => {
    for (let i = 0; i < total || !recovered(); i++) {
      const due = started + (i * 1000) / options.rate;
      if (due > Date.now()) await sleep(due - Date.now());
      calls.push(call(i));
    }
  })();

  // The status a load balancer reads (/health), and what monitoring is told is wrong (/admin/status).
  const health = async (): Promise<HealthReading> => {
    try {
      const [res, deep] = await Promise.all([
        fetch(`${apis[0].url}/health`, { signal: AbortSignal.timeout(CALL_TIMEOUT_MS) }),
        fetch(`${apis[0].url}/admin/status`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, signal: AbortSignal.timeout(CALL_TIMEOUT_MS) }),
      ]);
      await res.body?.cancel();
      const body = (await deep.json()) as { store?: boolean; temporal?: boolean; problems?: string[] };
      return { status: res.status, store: body.store, temporal: body.temporal, problems: body.problems };
    } catch {
      return { status: 0 };
    }
  };
  const faults: FaultFigures[] = [];
  const gap = (options.seconds * 1000) / (options.faults.length + 1);
  for (const [n, fault] of options.faults.entries()) {
    await sleep(Math.max(0, started + gap * (n + 1) - Date.now()));
    // Not before the previous fault has recovered (a call sent after its end answered 200, or the
    // bound passed): back to back, one fault's recovery would be measured through the next one.
    if (n > 0) {
      await waitFor(() => {
        if (!oks.some((ok) => ok.sentAt >= endedAt[n - 1]) && Date.now() - endedAt[n - 1] < RECOVERY_BOUND_MS) throw new Error(`${options.faults[n - 1].name} not recovered yet`);
      }, RECOVERY_BOUND_MS + 5_000);
    }
    log(`  fault: ${fault.name}`);
    startedAt.push(Date.now());
    const healthWhileDown: HealthReading[] = [];
    let down = true;
    // A reading every 250 ms whatever the last one is still waiting for: /admin/status may take its
    // store timeout (2 s) to answer, and reading in turn left a 2.5 s restart one or two samples,
    // both of /health's fresh 200 from before the fault or after it (a CI run saw none of its 503s).
    // A reading asked while the fault lasted counts, whenever it is answered.
    const polling = (async () => {
      const asked: Promise<void>[] = [];
      while (down) {
        asked.push(health().then((reading) => void healthWhileDown.push(reading)));
        await sleep(250);
      }
      await Promise.all(asked);
    })();
    await fault.apply({ inFlight: (url) => inFlight.get(url) ?? 0 });
    endedAt.push(Date.now());
    down = false;
    await polling;
    const after = Date.now();
    let healthAfter = await health();
    while (healthAfter.status !== 200 && Date.now() - after < RECOVERY_BOUND_MS) {
      await sleep(250);
      healthAfter = await health();
    }
    faults.push({ name: fault.name, healthWhileDown, showed: fault.shows ? healthWhileDown.some(fault.shows) : null, healthAfter, recoveryMs: -1, window: { calls: 0, refused: 0, acked: 0, delivered: 0, duplicates: 0, maxDelayMs: 0 } });
  }
  await sending;
  await Promise.all(calls);

  const acked = [...ackedAt.keys()];
  await waitForAll(receiver, acked, 180_000, log).catch((err: Error) => log(`  ${err.message}`));
  const got = receipts(receiver);
  const delays = acked.filter((id) => got.has(id)).map((id) => got.get(id)![0].at - ackedAt.get(id)!);
  faults.forEach((figures, n) => {
    const first = oks.filter((ok) => ok.sentAt >= endedAt[n]).sort((a, b) => a.sentAt - b.sentAt)[0];
    figures.recoveryMs = first ? first.sentAt - endedAt[n] : -1;
    const mine = sent.filter((c) => c.sentAt >= startedAt[n] && c.sentAt < (startedAt[n + 1] ?? Infinity));
    const ids = mine.filter((c) => ackedAt.has(c.messageId)).map((c) => c.messageId);
    figures.window = {
      calls: mine.length,
      refused: mine.filter((c) => c.status === '503').length,
      acked: ids.length,
      delivered: ids.filter((id) => got.has(id)).length,
      duplicates: ids.reduce((sum, id) => sum + Math.max(0, (got.get(id)?.length ?? 0) - 1), 0),
      maxDelayMs: Math.max(0, ...ids.filter((id) => got.has(id)).map((id) => got.get(id)![0].at - ackedAt.get(id)!)),
    };
  });
  return {
    calls: calls.length,
    statuses,
    connectionErrors,
    unavailableWithoutRetryAfter,
    unavailableCodes: [...unavailableCodes].sort(),
    acked: acked.length,
    delivered: acked.filter((id) => got.has(id)).length,
    lost: acked.filter((id) => !got.has(id)).length,
    duplicates: acked.reduce((sum, id) => sum + Math.max(0, (got.get(id)?.length ?? 0) - 1), 0),
    duplicatesThatDiffer: acked.filter((id) => new Set((got.get(id) ?? []).map((r) => r.body)).size > 1).length,
    maxDelayMs: Math.max(0, ...delays),
    faults,
    api: processState(apis),
    worker: processState(workers),
  };
}

const processState = (children: { process: ChildProcess }[]) =>
  children.map(({ process: child }) => (child.exitCode === null && child.signalCode === null ? 'running' : `exited ${child.exitCode ?? child.signalCode}`)).join(', ');

/** The rules every drill keeps, in words; empty when it kept them all. */
export function drillBroken(f: DrillFigures): string[] {
  const broken: string[] = [];
  if (/exited/.test(f.api) || /exited/.test(f.worker)) broken.push(`a process ended (API ${f.api}, worker ${f.worker})`);
  const others = Object.keys(f.statuses).filter((s) => s !== '200' && s !== '503');
  if (others.length > 0) broken.push(`replies other than 200/503: ${others.map((s) => `${s} ×${f.statuses[s]}`).join(', ')}`);
  if (f.unavailableWithoutRetryAfter > 0) broken.push(`${f.unavailableWithoutRetryAfter} 503s without Retry-After`);
  for (const fault of f.faults) {
    if (fault.showed === false) broken.push(`/health never showed ${fault.name}`);
    if (fault.healthAfter.status !== 200) broken.push(`/health did not come back to 200 after ${fault.name}`);
    if (fault.recoveryMs < 0 || fault.recoveryMs >= RECOVERY_BOUND_MS) broken.push(`recovery after ${fault.name} took ${fault.recoveryMs} ms`);
  }
  if (f.lost > 0) broken.push(`${f.lost} acknowledged calls not delivered`);
  if (f.duplicatesThatDiffer > 0) broken.push(`${f.duplicatesThatDiffer} messages delivered twice with different bodies`);
  return broken;
}

/**
 * One line per fault, for a log and for docs/reliability.md's table: fault | calls in its window
 * (refused 503) | acked | delivered | duplicates | max delay | recovery.
 */
export function drillRows(f: DrillFigures): string[] {
  return f.faults.map(({ name, window: w, recoveryMs }) =>
    `| ${name} | ${w.calls} (${w.refused} × 503) | ${w.acked} | ${w.delivered} | ${w.duplicates} | ${(w.maxDelayMs / 1000).toFixed(1)} s | ${recoveryMs} ms |`);
}
