import path from 'node:path';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { startReceiver } from './receiver';
import { sleep, startOwnTemporal, startOwnWorker, stopProcess } from './faults';
import { badReceiver, latencyFigures, sendUntilAccepted, sourceFor, type LatencyFigures, type Log } from './scenarios';
import { basicAuth, startSystem } from './system';
import { waitFor } from './processes';
import { deliveryWorkflowId } from '../../src/delivery/ids';

export interface NoisyNeighbourFigures {
  /** The healthy destination's latency (ingest to receipt) alone, then beside the hanging destination's backlog. */
  alone: LatencyFigures;
  besideBacklog: LatencyFigures;
  backlog: number;
  /** Requests the hanging receiver got while the healthy messages were measured: its backlog was being worked on. */
  hangingRequests: number;
  timeoutMs: number;
}

/**
 * Issue 20, item 5: a destination whose receiver hangs until the delivery timeout on every request,
 * with a backlog of `backlog` messages, beside a healthy destination of another source receiving a
 * message every `healthyGapMs`. The healthy destination's latency alone, then beside the backlog.
 * Its own Temporal dev server (`temporalArgs` to start-dev: how fairness is configured) and worker.
 */
export async function noisyNeighbourScenario(options: {
  dir: string;
  backlog: number;
  timeoutMs: number;
  healthyMessages: number;
  healthyGapMs: number;
  settled?: boolean;
  temporalArgs?: string[];
  workerEnv?: Record<string, string>;
  log?: Log;
}): Promise<NoisyNeighbourFigures> {
  const log = options.log ?? (() => undefined);
  const temporal = await startOwnTemporal(options.dir, undefined, options.temporalArgs ?? []);
  const taskQueue = `noisy-${process.pid}-${Date.now()}`;
  const env = { TEMPORAL_ADDRESS: temporal.address, TEMPORAL_TASK_QUEUE: taskQueue, ...options.workerEnv };
  const worker = await startOwnWorker(env, path.join(options.dir, 'worker.log'));
  const system = await startSystem({
    temporalAddress: temporal.address,
    temporalTaskQueue: taskQueue,
    deliveryTimeout: options.timeoutMs,
    // Backoff in proportion to production's: the hanging destination's rounds come back often
    // enough to keep its backlog busy through the measurement.
    deliveryInitialBackoff: 1_000,
    deliveryMaxBackoff: 5_000,
    deliveryRetryWindow: 30 * 60_000,
    ingestRateLimit: 0,
  });
  const healthy = await startReceiver();
  const hanging = await badReceiver('hang', 0);
  try {
    const good = await sourceFor(system, healthy, 'noisy-neighbour healthy');
    const noisy = await sourceFor(system, hanging, 'noisy-neighbour hanging');

    const latencies = async (prefix: string, count: number, gapMs: number) => {
      const sentAt = new Map<string, number>();
      for (let i = 0; i < count; i++) {
        const messageId = `${prefix}-${i}`;
        sentAt.set(messageId, Date.now());
        const res = await system.app.inject({ method: 'POST', url: '/v1/track', headers: { authorization: basicAuth(good.writeKey) }, payload: { userId: 'u', event: 'Healthy', messageId } });
        if (res.statusCode !== 200) throw new Error(`healthy message answered ${res.statusCode}`);
        await sleep(gapMs);
      }
      const values: number[] = [];
      for (const [messageId, at] of sentAt) values.push((await healthy.waitForMessage(messageId, 180_000)).at - at);
      if (process.env.NOISY_DEBUG) {
        const slowest = [...sentAt.keys()][values.indexOf(Math.max(...values))];
        const history = await system.client.workflow.getHandle(deliveryWorkflowId(good.sourceId, slowest)).fetchHistory();
        const t0 = Number(history.events![0].eventTime!.seconds) * 1000 + history.events![0].eventTime!.nanos! / 1e6;
        log(`slowest ${slowest} (sent ${sentAt.get(slowest)! - t0} ms before start): ${history.events!.map((e) => `${e.eventType}@${Math.round(Number(e.eventTime!.seconds) * 1000 + e.eventTime!.nanos! / 1e6 - t0)}`).join(' ')}`);
      }
      return values;
    };

    await latencies('warm', 5, 50);
    const alone = latencyFigures(await latencies('alone', options.healthyMessages, options.healthyGapMs));
    log(`alone: ${JSON.stringify(alone)}`);

    for (let first = 0; first < options.backlog; first += 100) {
      const ids = Array.from({ length: Math.min(100, options.backlog - first) }, (_, k) => `noisy-${first + k}`);
      await sendUntilAccepted(system, noisy.writeKey, ids);
    }
    // `settled`: the backlog is accepted and being worked on before the healthy messages go, so what
    // is measured is a hanging destination with messages waiting, not also the burst that brought
    // them (hundreds of new workflows at once cost the worker CPU whatever their destination).
    if (options.settled) await backlogSettled(system.client, taskQueue, log);
    else await waitFor(() => (hanging.received() > 0 ? true : Promise.reject(new Error('the hanging receiver got no request yet'))), 120_000);
    const before = hanging.received();
    const besideBacklog = latencyFigures(await latencies('beside', options.healthyMessages, options.healthyGapMs));
    const figures = { alone, besideBacklog, backlog: options.backlog, hangingRequests: hanging.received() - before, timeoutMs: options.timeoutMs };
    log(`beside backlog: ${JSON.stringify(figures)}`);
    if (process.env.NOISY_DEBUG) {
      for (const id of ['noisy-0', 'noisy-150', 'noisy-299']) {
        const history = await system.client.workflow.getHandle(deliveryWorkflowId(noisy.sourceId, id)).fetchHistory();
        const counts: Record<string, number> = {};
        for (const e of history.events!) counts[String(e.eventType)] = (counts[String(e.eventType)] ?? 0) + 1;
        log(`${id}: ${history.events!.length} events ${JSON.stringify(counts)}`);
      }
    }
    return figures;
  } finally {
    await system.close();
    await healthy.close();
    hanging.close();
    await stopProcess(worker.process, 'SIGKILL');
    await stopProcess(temporal.process);
  }
}

/**
 * Resolves once every delivery workflow on `taskQueue` has had its first workflow task: the queue's
 * workflow-task backlog stays under a handful for three looks in a row (what remains is the
 * running deliveries' own traffic).
 */
async function backlogSettled(client: Client, taskQueue: string, log: Log): Promise<void> {
  let quiet = 0;
  await waitFor(async () => {
    const { stats } = await client.workflowService.describeTaskQueue({ namespace: client.options.namespace, taskQueue: { name: taskQueue }, taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW, reportStats: true });
    const backlog = Number(stats?.approximateBacklogCount ?? 0);
    quiet = backlog < 5 ? quiet + 1 : 0;
    if (quiet < 3) {
      await sleep(500);
      throw new Error(`workflow-task backlog ${backlog}`);
    }
    log(`backlog settled`);
  }, 300_000);
}
