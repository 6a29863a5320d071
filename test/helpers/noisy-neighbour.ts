import path from 'node:path';
import { startReceiver } from './receiver';
import { startOwnTemporal, startOwnWorker, stopProcess } from './faults';
import { badReceiver, healthyLatencies, latencyFigures, sendUntilAccepted, sourceFor, type LatencyFigures, type Log } from './scenarios';
import { startSystem } from './system';
import { waitFor } from './processes';

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
 * A destination whose receiver hangs until the delivery timeout on every request,
 * with a backlog of `backlog` messages, beside a healthy destination of another source receiving a
 * message every `healthyGapMs`. The healthy destination's latency alone, then beside the backlog.
 * Its own Temporal dev server (fairness on, as scripts/temporal-dev.sh starts it) and worker.
 */
export async function noisyNeighbourScenario(options: {
  dir: string;
  backlog: number;
  timeoutMs: number;
  healthyMessages: number;
  healthyGapMs: number;
  log?: Log;
}): Promise<NoisyNeighbourFigures> {
  const log = options.log ?? (() => undefined);
  const temporal = await startOwnTemporal(options.dir);
  const taskQueue = `noisy-${process.pid}-${Date.now()}`;
  const env = { TEMPORAL_ADDRESS: temporal.address, TEMPORAL_TASK_QUEUE: taskQueue };
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

    const latencies = (prefix: string, count: number, gapMs: number) => healthyLatencies(system, healthy, good.writeKey, prefix, count, gapMs);

    await latencies('warm', 5, 50);
    const alone = latencyFigures(await latencies('alone', options.healthyMessages, options.healthyGapMs));
    log(`alone: ${JSON.stringify(alone)}`);

    for (let first = 0; first < options.backlog; first += 100) {
      const ids = Array.from({ length: Math.min(100, options.backlog - first) }, (_, k) => `noisy-${first + k}`);
      await sendUntilAccepted(system, noisy.writeKey, ids);
    }
    // Measured while the backlog arrives and its first attempts hang.
    await waitFor(() => (hanging.received() > 0 ? true : Promise.reject(new Error('the hanging receiver got no request yet'))), 120_000);
    const before = hanging.received();
    const besideBacklog = latencyFigures(await latencies('beside', options.healthyMessages, options.healthyGapMs));
    const figures = { alone, besideBacklog, backlog: options.backlog, hangingRequests: hanging.received() - before, timeoutMs: options.timeoutMs };
    log(`beside backlog: ${JSON.stringify(figures)}`);
    return figures;
  } finally {
    await system.close();
    await healthy.close();
    hanging.close();
    await stopProcess(worker.process, 'SIGKILL');
    await stopProcess(temporal.process);
  }
}

