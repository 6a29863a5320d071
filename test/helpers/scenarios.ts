import http from 'node:http';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { startReceiver, type Receiver } from './receiver';
import { percentile, sleep, startOwnApi, startOwnTemporal, startOwnWorker, stopProcess, type OwnApi, type OwnTemporal, type OwnWorker } from './faults';
import { basicAuth, postTrackBatch, startSystem, trackBatch, type TestSystem } from './system';
import { waitFor } from './processes';
import { deliveryWorkflowId } from '../../src/delivery/ids';
import { chunks } from '../../src/store/chunks';

/**
 * Fault scenarios shared by the jest tests (small counts, in `npm test`) and by
 * scripts/faults.ts (the full counts reported in docs/reliability.md). Each runs real processes.
 */

export interface Log {
  (line: string): void;
}

/** Receipts at a receiver, per messageId, with arrival times and bodies; a request it left unanswered is no receipt. */
/** The path of the probe `caughtUp` sends to a receiver: not a delivery. */
const CAUGHT_UP_PATH = '/__caught-up';

export function receipts(receiver: Receiver): Map<string, { at: number; body: string }[]> {
  const byId = new Map<string, { at: number; body: string }[]>();
  for (const request of receiver.requests) {
    if (request.hung || request.path === CAUGHT_UP_PATH) continue;
    const id = (JSON.parse(request.body) as { messageId: string }).messageId;
    if (!byId.has(id)) byId.set(id, []);
    byId.get(id)!.push({ at: request.at, body: request.body });
  }
  return byId;
}

/** Waits until every id has reached the receiver; on the way, says where an undelivered one stands. */
export async function waitForAll(receiver: Receiver, ids: string[], timeoutMs: number, log: Log, explain?: (id: string) => Promise<string>): Promise<void> {
  const started = Date.now();
  let lastReport = 0;
  await waitFor(async () => {
    const got = receipts(receiver);
    const missing = ids.filter((id) => !got.has(id));
    if (Date.now() - lastReport > 10_000) {
      lastReport = Date.now();
      const example = missing[0] && explain ? `; ${missing[0]}: ${await explain(missing[0]).catch((err: Error) => err.message)}` : '';
      log(`  ${ids.length - missing.length}/${ids.length} delivered after ${Math.round((Date.now() - started) / 1000)} s${example}`);
    }
    if (missing.length > 0) throw new Error(`${missing.length} of ${ids.length} messages not delivered`);
  }, timeoutMs);
}

/** Where a message's delivery workflow stands, for progress lines. */
function explainer(system: TestSystem, sourceId: string) {
  return async (messageId: string) => {
    const description = await system.client.workflow.getHandle(deliveryWorkflowId(sourceId, messageId)).describe();
    const history = await system.client.workflow.getHandle(deliveryWorkflowId(sourceId, messageId)).fetchHistory();
    const events = (history.events ?? []).map((e) => `${e.eventType}${e.workflowTaskFailedEventAttributes ? `(${e.workflowTaskFailedEventAttributes.cause}: ${e.workflowTaskFailedEventAttributes.failure?.message})` : ''}`);
    return `${description.status.name} on ${description.taskQueue}, events ${events.join(' ')}`;
  };
}

export async function sourceFor(system: TestSystem, receiver: { url: string }, name: string) {
  const { source, writeKey } = await system.store.sources.create(name);
  await system.store.destinations.create(source.id, { enabled: true, webhooks: [{ url: receiver.url, headers: {} }] });
  return { sourceId: source.id, writeKey };
}

/**
 * Posts a batch until it is accepted, as Segment's clients do: a 503 (Temporal slow to confirm the
 * starts, on a loaded machine) is retried, and re-sending the same messageIds is safe.
 */
export async function sendUntilAccepted(system: TestSystem, writeKey: string, ids: string[]): Promise<number> {
  for (let retries = 0; ; retries++) {
    const res = await postTrackBatch(system.app, writeKey, ids);
    if (res.statusCode === 200) return retries;
    if (res.statusCode !== 503 || retries > 60) throw new Error(`batch answered ${res.statusCode}: ${res.body}`);
    await sleep(1_000);
  }
}

/** Timing for fault runs: short attempts, a window long enough to outlast any restart. */
export const FAULT_DELIVERY = { deliveryTimeout: 2_000, deliveryInitialBackoff: 200, deliveryMaxBackoff: 2_000, deliveryRetryWindow: 15 * 60_000, ingestRateLimit: 0 };

export interface WorkerKillFigures {
  messages: number;
  deliveredAtKill: number;
  lost: number;
  duplicated: number;
  /** Duplicated messages whose first copy reached the receiver after the kill (must be 0). */
  duplicatedNotInFlight: number;
  /** Duplicated messages whose copies differ in any byte (must be 0). */
  duplicatesThatDiffer: number;
  secondsToDeliverAll: number;
}

/**
 * When the receiver (in this test process) has read what a killed worker sent before it died:
 * requests still in the kernel's buffers, which a busy event loop (files run side by side) may read
 * a second or more after the kill. A probe sent once the worker has exited is answered after them.
 */
export async function caughtUp(receiver: Receiver): Promise<number> {
  await fetch(new URL(CAUGHT_UP_PATH, receiver.url), { method: 'POST', body: '{}' });
  return Date.now();
}

/** What a worker kill cost, counted at the receiver once every message has arrived. */
export async function killFigures(receiver: Receiver, ids: string[], at: { killedAt: number; caughtUpAt: number; deliveredAtKill: number; started: number }): Promise<WorkerKillFigures> {
  const secondsToDeliverAll = (Date.now() - at.started) / 1000;
  await sleep(2_000); // let late duplicates (attempts that timed out after the kill) land before counting
  const got = receipts(receiver);
  const duplicates = [...got.values()].filter((copies) => copies.length > 1);
  return {
    messages: ids.length,
    deliveredAtKill: at.deliveredAtKill,
    lost: ids.filter((id) => !got.has(id)).length,
    duplicated: duplicates.length,
    // A request in the kernel's buffers when the process died is read a moment later: in flight,
    // as is any the receiver read before it answered the probe sent after the worker's exit.
    duplicatedNotInFlight: duplicates.filter((copies) => copies[0].at > Math.max(at.killedAt + 250, at.caughtUpAt)).length,
    duplicatesThatDiffer: duplicates.filter((copies) => new Set(copies.map((c) => c.body)).size > 1).length,
    secondsToDeliverAll,
  };
}

/**
 * SIGKILL the worker once a third of the messages have arrived, start a new one: every message is
 * delivered, and only attempts in flight at the kill can arrive twice.
 */
export async function workerKillScenario(options: { messages: number; dir: string; log?: Log }): Promise<WorkerKillFigures> {
  const log = options.log ?? (() => undefined);
  const taskQueue = `worker-kill-${process.pid}-${Date.now()}`;
  const env = { TEMPORAL_TASK_QUEUE: taskQueue };
  // Slow enough answers that attempts are in flight when the kill comes.
  const receiver = await startReceiver(() => ({ status: 200, delayMs: 20 }));
  const system = await startSystem({ temporalTaskQueue: taskQueue, ...FAULT_DELIVERY });
  const workers: ChildProcess[] = [];
  try {
    let worker = await startOwnWorker(env, path.join(options.dir, 'worker-1.log'));
    workers.push(worker.process);
    const { writeKey, sourceId } = await sourceFor(system, receiver, 'worker kill');
    const ids = Array.from({ length: options.messages }, (_, i) => `wk-${i}`);
    const started = Date.now();
    const sending = (async () => {
      for (const part of chunks(chunks(ids, 100), 4)) {
        await Promise.all(part.map((batch) => sendUntilAccepted(system, writeKey, batch)));
      }
    })();
    await waitFor(() => {
      if (receipts(receiver).size < options.messages / 3) throw new Error('not a third yet');
    }, 600_000);
    worker.process.kill('SIGKILL');
    const killedAt = Date.now();
    await worker.exited;
    const caughtUpAt = await caughtUp(receiver);
    const deliveredAtKill = receipts(receiver).size;
    log(`worker SIGKILLed with ${deliveredAtKill}/${options.messages} delivered`);
    worker = await startOwnWorker(env, path.join(options.dir, 'worker-2.log'));
    workers.push(worker.process);
    await sending;
    await waitForAll(receiver, ids, 900_000, log, explainer(system, sourceId));
    return await killFigures(receiver, ids, { killedAt, caughtUpAt, deliveredAtKill, started });
  } finally {
    await system.close();
    await receiver.close();
    for (const child of workers) await stopProcess(child, 'SIGKILL');
  }
}

export interface ApiKillFigures {
  requests: number;
  acceptedBeforeKill: number;
  failedAtKill: number;
  lostOf200: number;
  deliveredTwice: number;
  messages: number;
}

/**
 * A client sends batches (retrying any that fail, as Segment's clients do) while the API process
 * is SIGKILLed and restarted on the same port: every message of every 200 is delivered, once.
 */
export async function apiKillScenario(options: { batches: number; batchSize: number; dir: string; log?: Log }): Promise<ApiKillFigures> {
  const log = options.log ?? (() => undefined);
  const receiver = await startReceiver();
  // The API process starts workflows on the run's task queue, which the run's worker polls.
  const system = await startSystem({ ...FAULT_DELIVERY });
  let api: OwnApi | undefined;
  try {
    const { writeKey, sourceId } = await sourceFor(system, receiver, 'api kill');
    const env = { ADMIN_TOKEN: 'api-kill-admin-token-0123456789abcdef', INGEST_RATE_LIMIT: '0' };
    api = await startOwnApi(env, path.join(options.dir, 'api-1.log'));
    const port = Number(new URL(api.url).port);
    const batches = chunks(
      Array.from({ length: options.batches * options.batchSize }, (_, i) => `ak-${i}`),
      options.batchSize,
    );
    const accepted = new Set<string>();
    let acceptedBeforeKill = 0;
    let failedAtKill = 0;
    let killed = false;
    let requests = 0;

    const post = async (ids: string[]): Promise<boolean> => {
      requests++;
      try {
        const res = await fetch(`${api!.url}/v1/batch`, {
          method: 'POST',
          headers: { authorization: basicAuth(writeKey), 'content-type': 'application/json' },
          body: JSON.stringify(trackBatch(ids)),
          signal: AbortSignal.timeout(10_000),
        });
        if (res.status !== 200) return false;
        for (const id of ids) accepted.add(id);
        return true;
      } catch {
        return false;
      }
    };

    const clients = chunks(batches, Math.ceil(batches.length / 4)).map(async (mine) => {
      for (const ids of mine) {
        for (let attempt = 0; !(await post(ids)); attempt++) {
          if (killed && attempt === 0) failedAtKill++;
          await sleep(200);
        }
      }
    });
    await waitFor(() => {
      if (accepted.size < (options.batches * options.batchSize) / 3) throw new Error('not a third yet');
    }, 600_000);
    acceptedBeforeKill = accepted.size;
    killed = true;
    api.process.kill('SIGKILL');
    await api.exited;
    log(`API SIGKILLed with ${acceptedBeforeKill} messages accepted`);
    await sleep(1_000);
    api = await startOwnApi(env, path.join(options.dir, 'api-2.log'), port);
    await Promise.all(clients);
    const ids = [...accepted];
    await waitForAll(receiver, ids, 900_000, log, explainer(system, sourceId));
    await sleep(1_000);
    const got = receipts(receiver);
    return {
      requests,
      acceptedBeforeKill,
      failedAtKill,
      lostOf200: ids.filter((id) => !got.has(id)).length,
      deliveredTwice: [...got.values()].filter((copies) => copies.length > 1).length,
      messages: options.batches * options.batchSize,
    };
  } finally {
    await stopProcess(api?.process);
    await system.close();
    await receiver.close();
  }
}

export interface TemporalRestartFigures {
  acceptedBefore: number;
  whileDown: { status: number; retryAfter: string | null; code: string }[];
  healthWhileDown: number;
  retriesUntilAccepted: number;
  lost: number;
  messages: number;
  secondsDown: number;
}

/**
 * Stop the Temporal dev server mid-run and start it again on the same database file: while it is
 * down the API answers 503 (never 200), a client's retries succeed once it is back, and nothing
 * accepted before, during or after is lost.
 */
export async function temporalRestartScenario(options: { messages: number; dir: string; log?: Log; startTimeoutMs?: number }): Promise<TemporalRestartFigures> {
  const log = options.log ?? (() => undefined);
  let temporal: OwnTemporal = await startOwnTemporal(options.dir);
  const taskQueue = `temporal-restart-${process.pid}`;
  const env = { TEMPORAL_ADDRESS: temporal.address, TEMPORAL_TASK_QUEUE: taskQueue };
  const receiver = await startReceiver(() => ({ status: 200, delayMs: 20 }));
  // Each refused call takes INGEST_START_TIMEOUT (default 10 s) to hear its 503: the test shortens it.
  const system = await startSystem({ temporalAddress: temporal.address, temporalTaskQueue: taskQueue, ...FAULT_DELIVERY, ...(options.startTimeoutMs && { ingestStartTimeout: options.startTimeoutMs }) });
  let worker: OwnWorker | undefined;
  try {
    worker = await startOwnWorker(env, path.join(options.dir, 'worker.log'));
    const { writeKey, sourceId } = await sourceFor(system, receiver, 'temporal restart');
    const send = (ids: string[]) => postTrackBatch(system.app, writeKey, ids);
    const half = Math.floor(options.messages / 2);
    const before = Array.from({ length: half }, (_, i) => `tr-before-${i}`);
    const after = Array.from({ length: options.messages - half }, (_, i) => `tr-after-${i}`);

    for (const ids of chunks(before, 100)) await sendUntilAccepted(system, writeKey, ids);
    await waitFor(() => {
      if (receipts(receiver).size < half / 4) throw new Error('deliveries not under way yet');
    }, 600_000);

    await stopProcess(temporal.process, 'SIGTERM', 30_000);
    const downAt = Date.now();
    log(`Temporal stopped with ${receipts(receiver).size}/${half} delivered`);
    const whileDown: TemporalRestartFigures['whileDown'] = [];
    for (let i = 0; i < 3; i++) {
      const res = await send([`tr-down-probe-${i}`]);
      whileDown.push({ status: res.statusCode, retryAfter: (res.headers['retry-after']) ?? null, code: res.json().code });
    }
    const healthWhileDown = (await system.app.inject({ method: 'GET', url: '/health' })).statusCode;

    // A client keeps retrying its batch; the server comes back on the same port and database file.
    let retriesUntilAccepted = 0;
    const client = (async () => {
      for (const ids of chunks(after, 100)) {
        while ((await send(ids)).statusCode !== 200) {
          retriesUntilAccepted++;
          await sleep(500);
        }
      }
    })();
    // Back only once the client has been refused at least once, so its retry is what gets through.
    await waitFor(() => {
      if (retriesUntilAccepted === 0) throw new Error('no refused attempt yet');
    }, 120_000);
    temporal = await startOwnTemporal(options.dir, temporal.port);
    const secondsDown = (Date.now() - downAt) / 1000;
    log(`Temporal restarted after ${secondsDown.toFixed(1)} s`);
    await client;
    const ids = [...before, ...after];
    await waitForAll(receiver, ids, 900_000, log, explainer(system, sourceId));
    const got = receipts(receiver);
    // Probes answered 503 were not accepted; one answered 200 would have to be delivered too.
    const probesAccepted = whileDown.map((w, i) => (w.status === 200 ? `tr-down-probe-${i}` : undefined)).filter((id): id is string => !!id);
    return {
      acceptedBefore: before.length,
      whileDown,
      healthWhileDown,
      retriesUntilAccepted,
      lost: [...ids, ...probesAccepted].filter((id) => !got.has(id)).length,
      messages: ids.length,
      secondsDown,
    };
  } finally {
    await system.close();
    await receiver.close();
    await stopProcess(worker?.process, 'SIGKILL');
    await stopProcess(temporal.process);
  }
}

/** A receiver that behaves badly, counting its requests and how many are open at once. */
export async function badReceiver(behaviour: 'hang' | 'reset' | 'slow', answerAfterMs: number) {
  let open = 0;
  let maxOpen = 0;
  let received = 0;
  const timers = new Set<NodeJS.Timeout>();
  const server = http.createServer((req, res) => {
    received++;
    open++;
    maxOpen = Math.max(maxOpen, open);
    // Closed when the sender gives up (its FIN read: 'end', emitted before any later I/O callback)
    // or when the response is done, whichever comes first. Counting only the response's 'close',
    // which follows a FIN by a loop turn or more, let the sender's next request on a new connection
    // arrive before it on a loaded box and counted one request too many as open.
    let counted = true;
    const closed = () => {
      if (!counted) return;
      counted = false;
      open--;
    };
    res.on('close', closed);
    req.socket.once('end', closed);
    if (behaviour === 'reset') req.socket.destroy();
    // 'hang' never answers; the client gives up at the delivery timeout.
    if (behaviour === 'slow') {
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (!res.destroyed) res.end('{}');
      }, answerAfterMs);
      timers.add(timer);
    }
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received: () => received,
    maxOpen: () => maxOpen,
    close: () => {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      server.close();
    },
  };
}

/** Sends track calls to a healthy destination's source, one every gap, and returns each one's latency to its receiver. */
export async function healthyLatencies(system: TestSystem, receiver: Receiver, writeKey: string, prefix: string, count: number, gapMs: number, meanwhile?: (i: number) => Promise<void>): Promise<number[]> {
  const sentAt = new Map<string, number>();
  for (let i = 0; i < count; i++) {
    const messageId = `${prefix}-${i}`;
    sentAt.set(messageId, Date.now());
    const res = await system.app.inject({ method: 'POST', url: '/v1/track', headers: { authorization: basicAuth(writeKey) }, payload: { userId: 'u', event: 'Healthy', messageId } });
    if (res.statusCode !== 200) throw new Error(`healthy message answered ${res.statusCode}`);
    await meanwhile?.(i);
    await sleep(gapMs);
  }
  const values: number[] = [];
  for (const [messageId, at] of sentAt) values.push((await receiver.waitForMessage(messageId, 180_000)).at - at);
  return values;
}

export interface LatencyFigures {
  count: number;
  p50: number;
  p95: number;
  max: number;
}

export interface IsolationFigures {
  baseline: LatencyFigures;
  underFaults: LatencyFigures;
  badReceivers: Record<string, { sent: number; received: number; maxOpenAtOnce: number }>;
  perWebhook: number;
  slots: number;
  timeoutMs: number;
}

export const latencyFigures = (values: number[]): LatencyFigures => ({ count: values.length, p50: percentile(values, 50), p95: percentile(values, 95), max: Math.max(...values) });

/**
 * A healthy destination's latency (ingest to receipt) with nothing else going on, then while three
 * other destinations hang, reset every connection, or answer just inside the timeout, and keep
 * getting messages. The worker is the scenario's own, with `slots` activity and workflow task
 * slots and at most `perWebhook` attempts per webhook URL.
 */
export async function isolationScenario(options: {
  dir: string;
  slots: number;
  perWebhook: number;
  timeoutMs: number;
  healthyMessages: number;
  healthyGapMs: number;
  /** Messages to each bad receiver up front, and then one more to each every `badGapMs`. */
  badBurst: number;
  badGapMs: number;
  log?: Log;
}): Promise<IsolationFigures> {
  const log = options.log ?? (() => undefined);
  const taskQueue = `isolation-${process.pid}-${Date.now()}`;
  const worker = await startOwnWorker(
    {
      TEMPORAL_TASK_QUEUE: taskQueue,
      WORKER_MAX_CONCURRENT_ACTIVITIES: String(options.slots),
      WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: String(options.slots),
      WORKER_MAX_IN_FLIGHT_PER_WEBHOOK: String(options.perWebhook),
    },
    path.join(options.dir, 'worker.log'),
  );
  const system = await startSystem({
    temporalTaskQueue: taskQueue,
    deliveryTimeout: options.timeoutMs,
    // Backoff as in production, in proportion: a misbehaving receiver's retries come rarely.
    deliveryInitialBackoff: 5_000,
    deliveryMaxBackoff: 30_000,
    deliveryRetryWindow: 30 * 60_000,
    ingestRateLimit: 0,
  });
  const healthy = await startReceiver();
  const bad = {
    hang: await badReceiver('hang', 0),
    reset: await badReceiver('reset', 0),
    slow: await badReceiver('slow', options.timeoutMs - 1_000),
  };
  try {
    const good = await sourceFor(system, healthy, 'isolation healthy');

    const latencies = (prefix: string, count: number, gapMs: number, meanwhile?: (i: number) => Promise<void>) => healthyLatencies(system, healthy, good.writeKey, prefix, count, gapMs, meanwhile);

    // Warm-up (workflow bundle, connections), then the baseline with nothing misbehaving.
    await latencies('warm', 5, 50);
    const baseline = await latencies('base', Math.min(options.healthyMessages, 40), options.healthyGapMs);
    log(`baseline: ${JSON.stringify(latencyFigures(baseline))}`);

    const sent: Record<string, number> = {};
    const sendBad = async (name: string, writeKey: string, count: number) => {
      const ids = Array.from({ length: count }, () => `${name}-${(sent[name] = (sent[name] ?? 0) + 1)}`);
      await postTrackBatch(system.app, writeKey, ids);
    };
    const badSources: [string, string][] = [];
    for (const [name, receiver] of Object.entries(bad)) {
      const { writeKey } = await sourceFor(system, receiver, `isolation ${name}`);
      badSources.push([name, writeKey]);
      await sendBad(name, writeKey, options.badBurst);
    }
    const everyBad = Math.max(1, Math.round(options.badGapMs / options.healthyGapMs));
    const underFaults = await latencies('faults', options.healthyMessages, options.healthyGapMs, async (i) => {
      if (i % everyBad === everyBad - 1) for (const [name, writeKey] of badSources) await sendBad(name, writeKey, 1);
      if (i % 200 === 199) log(`  ${i + 1}/${options.healthyMessages} healthy messages sent`);
    });
    return {
      baseline: latencyFigures(baseline),
      underFaults: latencyFigures(underFaults),
      badReceivers: Object.fromEntries(Object.entries(bad).map(([name, r]) => [name, { sent: sent[name] ?? 0, received: r.received(), maxOpenAtOnce: r.maxOpen() }])),
      perWebhook: options.perWebhook,
      slots: options.slots,
      timeoutMs: options.timeoutMs,
    };
  } finally {
    await system.close();
    await healthy.close();
    for (const r of Object.values(bad)) r.close();
    await stopProcess(worker.process, 'SIGKILL');
  }
}
