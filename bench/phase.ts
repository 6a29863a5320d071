import { existsSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { WorkflowNotFoundError } from '@temporalio/client';
import { Pool } from 'undici';
import { deliveryWorkflowId } from '../src/delivery/ids';
import { SOURCE } from '../src/workflows/search-attributes';
import { folderBytes, ProcessMeter } from './proc';
import { percentiles, round, type Percentiles } from './stats';
import { stagePercentiles, type CallTimes, type Stage } from './stages';
import type { BenchStack, Receipt, VariantName } from './system';
import type { SystemName } from './systems';
import { workflowTimes } from './workflow-times';

/** What analytics-next's consent wrapper stamps on an event: every category the governed destination needs, granted. */
const GRANTED = { categoryPreferences: { analytics: true, advertising: true, functional: true } };

export interface Load {
  messages: number;
  /** Sender lanes; each has one batch in flight at a time. */
  concurrency: number;
  /** Messages per batch: one /v1/batch request for Switchyard. */
  batchSize: number;
  /** Messages of one batch in flight at once (the API's workflow starts per request). */
  fanout: number;
  /** Messages per second offered (batches paced evenly); undefined: as fast as acknowledged. */
  rate?: number;
  /** One message per request (POST /v1/track), each sent at its due time whatever is in flight (open loop, needs rate). */
  single?: boolean;
}

export interface PhaseResult {
  system: SystemName;
  messages: number;
  repeat: number;
  startedAt: string;
  loadAverage: { before: number[]; after: number[] };
  ingest: { messagesPerSecond: number; ackLatencyMs: Percentiles; batches: number; retries: number };
  /** Messages per second offered, when paced (--rate). */
  offeredRate?: number;
  endToEnd: { messagesPerSecond: number; latencyMs: Percentiles };
  /** Single calls (floor and Switchyard): where a call's time went, over a sample of 100 (bench/stages.ts). */
  stagesMs?: Record<Stage, Percentiles>;
  delivered: number;
  duplicates: number;
  /** TCP connections the receiver accepted during the phase (keep-alive: a handful, not one per message). */
  receiverConnections: number;
  missing: number;
  durationSeconds: number;
  /** Over every phase so far on this task queue (Switchyard: of its measured source): still running, and closed other than Completed. */
  workflows?: { running: number; notCompleted: number };
  cost: {
    cpuSeconds: Record<string, number>;
    cpuSecondsPer1000: Record<string, number>;
    peakRssMb: Record<string, number>;
    historyEventsPerMessage: number | null;
    dataGrowthKbPer1000: number | null;
  };
}

const now = () => performance.timeOrigin + performance.now();

async function inParallel<T>(items: T[], limit: number, run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await run(items[next++]);
  });
  await Promise.all(lanes);
}

/** Receipts of the current phase, by messageId: first arrival time and how many came again. */
class ReceiptBook {
  prefix = '\u0000';
  readonly firstSeen = new Map<string, number>();
  duplicates = 0;
  strays = 0;

  expect(prefix: string): void {
    this.prefix = prefix;
    this.firstSeen.clear();
    this.duplicates = 0;
  }

  accept = (receipts: Receipt[]) => {
    for (const [id, at] of receipts) {
      if (!id.startsWith(this.prefix)) this.strays++;
      else if (this.firstSeen.has(id)) this.duplicates++;
      else this.firstSeen.set(id, at);
    }
  };
}

/** A sample of `count` items spread evenly over the list. */
function spreadSample<T>(items: T[], count: number): T[] {
  if (items.length <= count) return items;
  return Array.from({ length: count }, (_, i) => items[Math.floor((i * items.length) / count)]);
}

export interface PhaseRunner {
  run(system: SystemName, load: Load, repeat: number, options?: { warmup?: boolean }): Promise<PhaseResult>;
  close(): Promise<void>;
}

export function phaseRunner(stack: BenchStack, runId: string, progress: (line: string, final?: boolean) => void): PhaseRunner {
  const book = new ReceiptBook();
  stack.onReceipts(book.accept);
  // One pool per API process; batches go to them in turn.
  const apiPools = stack.switchyard.apiUrls.map((url) => new Pool(url, { connections: 256, keepAliveTimeout: 60_000 }));
  let nextApi = 0;
  const variantPools = Object.fromEntries(Object.entries(stack.variants).map(([name, variant]) => [name, new Pool(variant.apiUrl, { connections: 256, keepAliveTimeout: 60_000 })])) as Partial<Record<VariantName, Pool>>;
  const floorPools = stack.floor.apiUrls.map((url) => new Pool(url, { connections: 256, keepAliveTimeout: 60_000 }));
  let nextFloorApi = 0;
  const designFloorPools = (stack.designFloor?.apiUrls ?? []).map((url) => new Pool(url, { connections: 256, keepAliveTimeout: 60_000 }));
  let nextDesignFloorApi = 0;
  const variantOf = (name: VariantName) => {
    const variant = stack.variants[name];
    if (!variant) throw new Error(`the stack was started without the ${name} system`);
    return variant;
  };
  const receiverUrl = new URL(stack.receiverUrl);
  const receiverPool = new Pool(receiverUrl.origin, { connections: 1024, keepAliveTimeout: 60_000 });
  const basic = (writeKey: string) => `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`;
  const authorization = basic(stack.switchyard.writeKey);
  const limitedAuthorization = basic(stack.limited.writeKey);
  const governedAuthorization = basic(stack.governed.writeKey);
  const mappedAuthorization = basic(stack.mapped.writeKey);
  const plannedAuthorization = basic(stack.planned.writeKey);
  const insertedAuthorization = basic(stack.inserted.writeKey);
  const scriptedAuthorization = basic(stack.scripted.writeKey);
  let phaseNumber = 0;
  /** The source a delivery system's workflow ids carry. */
  const sourceIdOf = (system: SystemName) =>
    system === 'floor' || system === 'design-floor'
      ? stack.floor.sourceId
      : system === 'limited'
        ? stack.limited.sourceId
        : system === 'governed'
          ? stack.governed.sourceId
          : system === 'mapped'
            ? stack.mapped.sourceId
          : system === 'planned'
            ? stack.planned.sourceId
          : system === 'inserted'
            ? stack.inserted.sourceId
          : system === 'scripted'
            ? stack.scripted.sourceId
          : system === 'plain' || system === 'unarchived'
            ? variantOf(system).sourceId
            : stack.switchyard.sourceId;
  const taskQueueOf = (system: SystemName) =>
    system === 'bare'
      ? stack.bare.taskQueue
      : system === 'floor'
        ? stack.floor.taskQueue
        : system === 'design-floor'
          ? stack.designFloor!.taskQueue
          : system === 'plain' || system === 'unarchived'
            ? variantOf(system).taskQueue
            : stack.switchyard.taskQueue;

  const track = (messageId: string, i: number, consent?: typeof GRANTED) => ({
    type: 'track',
    messageId,
    userId: `user-${i % 997}`,
    event: 'Order Completed',
    properties: { orderId: `order-${i}`, total: 42.5, currency: 'EUR', items: 3 },
    context: { library: { name: 'switchyard-bench', version: '1' }, ...(consent && { consent }) },
    timestamp: new Date().toISOString(),
  });

  /** One /v1/batch of `ids`; resolves when every message of it is acknowledged, with the retries it needed. */
  async function postBatch(pool: Pool, ids: string[], first: number, single: boolean, auth = authorization, consent?: typeof GRANTED): Promise<number> {
    const sentAt = new Date().toISOString();
    const body = JSON.stringify(single ? { ...track(ids[0], first, consent), sentAt } : { batch: ids.map((id, k) => track(id, first + k, consent)), sentAt });
    const path = single ? '/v1/track' : '/v1/batch';
    // A Segment client retries 429/5xx; bounded here so a broken API ends the bench instead of looping.
    for (let attempt = 0; ; attempt++) {
      const response = await pool.request({ method: 'POST', path, headers: { authorization: auth, 'content-type': 'application/json' }, body });
      const text = await response.body.text();
      if (response.statusCode === 200) return attempt;
      if (attempt >= 5 || (response.statusCode !== 429 && response.statusCode < 500)) throw new Error(`${path} answered ${response.statusCode}: ${text}`);
      await new Promise((resolve) => setTimeout(resolve, 500 * 2 ** attempt));
    }
  }

  /** Sends one batch; resolves when every message of it is acknowledged. Returns retries needed. */
  const senders: Record<SystemName, (ids: string[], first: number, fanout: number, single: boolean) => Promise<number>> = {
    switchyard: (ids, first, _fanout, single) => postBatch(apiPools[nextApi++ % apiPools.length], ids, first, single),
    limited: (ids, first, _fanout, single) => postBatch(apiPools[nextApi++ % apiPools.length], ids, first, single, limitedAuthorization),
    governed: (ids, first, _fanout, single) => postBatch(apiPools[nextApi++ % apiPools.length], ids, first, single, governedAuthorization, GRANTED),
    mapped: (ids, first, _fanout, single) => postBatch(apiPools[nextApi++ % apiPools.length], ids, first, single, mappedAuthorization),
    planned: (ids, first, _fanout, single) => postBatch(apiPools[nextApi++ % apiPools.length], ids, first, single, plannedAuthorization),
    inserted: (ids, first, _fanout, single) => postBatch(apiPools[nextApi++ % apiPools.length], ids, first, single, insertedAuthorization),
    scripted: (ids, first, _fanout, single) => postBatch(apiPools[nextApi++ % apiPools.length], ids, first, single, scriptedAuthorization),
    floor: (ids, first, _fanout, single) => postBatch(floorPools[nextFloorApi++ % floorPools.length], ids, first, single),
    'design-floor'(ids, first, _fanout, single) {
      if (designFloorPools.length === 0) throw new Error('the stack was started without the design floor');
      return postBatch(designFloorPools[nextDesignFloorApi++ % designFloorPools.length], ids, first, single);
    },
    plain: (ids, first, _fanout, single) => postBatch(variantPools.plain!, ids, first, single, basic(variantOf('plain').writeKey)),
    unarchived: (ids, first, _fanout, single) => postBatch(variantPools.unarchived!, ids, first, single, basic(variantOf('unarchived').writeKey)),
    async bare(ids, _first, fanout) {
      await inParallel(ids, fanout, async (id) => {
        await stack.client.workflow.start('benchNoop', { taskQueue: stack.bare.taskQueue, workflowId: `bench:${id}`, args: [id] });
      });
      return 0;
    },
    async raw(ids, first, fanout) {
      await inParallel(ids.map((id, k) => [id, first + k] as const), fanout, async ([id, i]) => {
        const body = JSON.stringify({ version: 1, ...track(id, i), receivedAt: new Date().toISOString() });
        const response = await receiverPool.request({ method: 'POST', path: receiverUrl.pathname, headers: { 'content-type': 'application/json' }, body });
        await response.body.dump();
        if (response.statusCode !== 200) throw new Error(`receiver answered ${response.statusCode}`);
      });
      return 0;
    },
  };

  /** SQLite in WAL mode holds recent writes in the -wal file; fold them in so file sizes compare. */
  function checkpointedDataBytes(): number {
    const temporalDb = path.join(stack.dir, 'temporal.db');
    if (existsSync(`${temporalDb}-wal`)) {
      const db = new Database(temporalDb, { fileMustExist: true });
      try {
        db.pragma('busy_timeout = 5000');
        db.pragma('wal_checkpoint(TRUNCATE)');
      } catch {
        // Busy: the size then includes the WAL, which is what is on disk.
      } finally {
        db.close();
      }
    }
    return folderBytes(stack.dir) - logBytes();
  }

  function logBytes(): number {
    let total = 0;
    for (const name of ['temporal.log', 'receiver.log', 'worker.log', 'api.log', 'bare-worker.log']) {
      try {
        total += statSync(path.join(stack.dir, name)).size;
      } catch {
        // not there
      }
    }
    return total;
  }

  async function workflowCounts(system: SystemName): Promise<PhaseResult['workflows']> {
    const queue = taskQueueOf(system);
    // The measured source only: in --noisy another source's backlog runs on the same queue for the whole run, and `limited` shares it.
    const scope = system === 'switchyard' || system === 'limited' || system === 'governed' || system === 'mapped' || system === 'planned' || system === 'inserted' || system === 'scripted' ? `TaskQueue = "${queue}" AND ${SOURCE.name} = "${sourceIdOf(system)}"` : `TaskQueue = "${queue}"`;
    const count = async (status: string) => (await stack.client.workflow.count(`${scope} AND ExecutionStatus = "${status}"`)).count;
    const closedOtherwise = (await stack.client.workflow.count(`${scope} AND ExecutionStatus != "Running" AND ExecutionStatus != "Completed"`)).count;
    return { running: await count('Running'), notCompleted: closedOtherwise };
  }

  async function waitUntil(check: () => boolean | Promise<boolean>, deadline: number): Promise<boolean> {
    while (!(await check())) {
      if (Date.now() > deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return true;
  }

  async function run(system: SystemName, load: Load, repeat: number, { warmup = false } = {}): Promise<PhaseResult> {
    const { messages, fanout } = load;
    const single = load.single === true && load.rate !== undefined;
    // Single calls: every request its own lane, sent at its due time (open loop, as independent clients send).
    const batchSize = single ? 1 : load.batchSize;
    phaseNumber++;
    const prefix = `${runId}-${phaseNumber}-`;
    const ids = Array.from({ length: messages }, (_, i) => `${prefix}${i}`);
    const batches: { ids: string[]; first: number }[] = [];
    for (let first = 0; first < messages; first += batchSize) batches.push({ ids: ids.slice(first, first + batchSize), first });
    const batchSentAt = new Float64Array(batches.length);
    const batchAckedAt = new Float64Array(batches.length);
    const ackLatencies: number[] = [];
    let acked = 0;
    let retries = 0;
    let lastAck = 0;
    // Bounded: generous for a slow, busy box (5 messages/s), never endless.
    const deadline = Date.now() + 300_000 + messages * 200;

    book.expect(prefix);
    const connectionsBefore = stack.receiverConnections();
    const dataBefore = system === 'raw' ? 0 : await (stack.dataBytes?.() ?? checkpointedDataBytes());
    const meter = new ProcessMeter(stack.pids, stack.processTrees);
    const loadBefore = os.loadavg().map((l) => round(l, 2));
    const label = `${warmup ? 'warm-up ' : ''}${system} n=${messages}${warmup ? '' : ` #${repeat}`}`;
    const started = now();
    const ticker = setInterval(() => {
      const seconds = (now() - started) / 1000;
      progress(`  ${label}  acked ${acked}/${messages}  delivered ${book.firstSeen.size}  ${Math.round(book.firstSeen.size / seconds)} msg/s  ${seconds.toFixed(0)}s`);
    }, 1000);
    meter.start();
    try {
      let next = 0;
      await Promise.all(
        Array.from({ length: Math.min(single ? batches.length : load.concurrency, batches.length) }, async () => {
          while (next < batches.length) {
            const index = next++;
            const batch = batches[index];
            if (load.rate) {
              const due = started + (batch.first / load.rate) * 1000;
              if (due > now()) await new Promise((resolve) => setTimeout(resolve, due - now()));
            }
            batchSentAt[index] = now();
            retries += await senders[system](batch.ids, batch.first, fanout, single);
            lastAck = now();
            batchAckedAt[index] = lastAck;
            ackLatencies.push(lastAck - batchSentAt[index]);
            acked += batch.ids.length;
          }
        }),
      );
      await waitUntil(() => book.firstSeen.size >= messages, deadline);
    } finally {
      clearInterval(ticker);
    }
    const cost = meter.stop();
    let lastReceipt = started;
    for (const at of book.firstSeen.values()) lastReceipt = Math.max(lastReceipt, at);
    const latencies = new Float64Array(book.firstSeen.size);
    let k = 0;
    for (const [id, at] of book.firstSeen) latencies[k++] = at - batchSentAt[Math.floor(Number(id.slice(prefix.length)) / batchSize)];

    let workflows: PhaseResult['workflows'];
    let historyEventsPerMessage: number | null = null;
    if (system !== 'raw') {
      // History and data size are read once the workflows have closed (the last task comes after the receipt).
      await waitUntil(async () => (await workflowCounts(system))!.running === 0, Date.now() + 60_000);
      workflows = await workflowCounts(system);
      const sample = spreadSample(ids, 50);
      // A workflow deleted already (a retention shorter than the run) is left out.
      const lengths = (
        await Promise.all(
          sample.map(async (id) => {
            const workflowId = system === 'bare' ? `bench:${id}` : deliveryWorkflowId(sourceIdOf(system), id);
            try {
              return (await stack.client.workflow.getHandle(workflowId).describe()).historyLength;
            } catch (err) {
              if (err instanceof WorkflowNotFoundError) return undefined;
              throw err;
            }
          }),
        )
      ).filter((length): length is number => length !== undefined);
      historyEventsPerMessage = lengths.length === 0 ? null : lengths.reduce((a, b) => a + b, 0) / lengths.length;
    }
    let stagesMs: PhaseResult['stagesMs'];
    if (single && system !== 'raw' && system !== 'bare') {
      const sourceId = sourceIdOf(system);
      const sample = await Promise.all(
        spreadSample(ids, 100).map(async (id): Promise<CallTimes | undefined> => {
          const index = Number(id.slice(prefix.length));
          const times = await workflowTimes(stack.client, deliveryWorkflowId(sourceId, id));
          const receiptAt = book.firstSeen.get(id);
          return times && receiptAt !== undefined ? { sentAt: batchSentAt[index], ackAt: batchAckedAt[index], receiptAt, ...times } : undefined;
        }),
      );
      stagesMs = stagePercentiles(sample.filter((t): t is CallTimes => t !== undefined));
    }
    const dataGrowth = system === 'raw' ? null : (await (stack.dataBytes?.() ?? checkpointedDataBytes())) - dataBefore;
    const delivered = book.firstSeen.size;
    const per1000 = (value: number) => round((value / messages) * 1000, 3);
    const totalCpu = Object.values(cost.cpuSeconds).reduce((a, b) => a + b, 0);
    const result: PhaseResult = {
      system,
      messages,
      repeat,
      startedAt: new Date(started).toISOString(),
      loadAverage: { before: loadBefore, after: os.loadavg().map((l) => round(l, 2)) },
      offeredRate: load.rate,
      ingest: {
        messagesPerSecond: round(messages / ((lastAck - started) / 1000)),
        ackLatencyMs: mapValues(percentiles(ackLatencies), (v) => round(v, 2)),
        batches: batches.length,
        retries,
      },
      endToEnd: {
        messagesPerSecond: round(delivered / ((lastReceipt - started) / 1000)),
        latencyMs: mapValues(percentiles(latencies), (v) => round(v, 2)),
      },
      ...(stagesMs && { stagesMs }),
      delivered,
      duplicates: book.duplicates,
      receiverConnections: stack.receiverConnections() - connectionsBefore,
      missing: messages - delivered,
      durationSeconds: round((now() - started) / 1000, 2),
      workflows,
      cost: {
        cpuSeconds: mapValues(cost.cpuSeconds, (v) => round(v, 2)),
        cpuSecondsPer1000: { ...mapValues(cost.cpuSeconds, per1000), total: per1000(totalCpu) },
        peakRssMb: mapValues(cost.peakRssMb, (v) => round(v, 0)),
        historyEventsPerMessage: historyEventsPerMessage === null ? null : round(historyEventsPerMessage, 2),
        dataGrowthKbPer1000: dataGrowth === null ? null : round(dataGrowth / 1024 / messages * 1000, 1),
      },
    };
    progress(
      `  ${label}  ${delivered}/${messages} delivered in ${result.durationSeconds}s: ${result.endToEnd.messagesPerSecond} msg/s end to end, p99 ${result.endToEnd.latencyMs.p99} ms` +
        (result.missing ? `  (${result.missing} MISSING)` : ''),
      true,
    );
    return result;
  }

  return {
    run,
    async close() {
      for (const pool of apiPools) await pool.close();
      for (const pool of [...floorPools, ...designFloorPools, ...Object.values(variantPools)]) await pool.close();
      await receiverPool.close();
    },
  };
}

function mapValues<T extends object, V>(object: T, f: (value: T[keyof T]) => V): { [K in keyof T]: V } {
  return Object.fromEntries(Object.entries(object).map(([key, value]) => [key, f(value as T[keyof T])])) as { [K in keyof T]: V };
}
