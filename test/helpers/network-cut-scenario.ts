import path from 'node:path';
import { faultDrill, type DrillFigures } from './fault-drill';
import { sleep, startOwnApi, startOwnWorker, stopProcess } from './faults';
import { ADMIN_TOKEN } from './production-shape';
import { startReceiver } from './receiver';
import type { Log } from './scenarios';
import { startTcpRelay } from './tcp-relay';

/**
 * Issue 21: the network between the workers and Temporal cut for a while, then between the API and
 * Temporal, under steady single calls. Each process of the scenario's own reaches the run's dev
 * server through a TCP relay of its own that the drill cuts (open connections reset, new ones
 * refused) and restores. While the worker is cut off the API keeps accepting and deliveries wait;
 * while the API is cut off it answers 503 `temporal_unavailable` with Retry-After and `/health`
 * says Temporal is away. Every acknowledged call is delivered once the network is back.
 */
export async function networkCutScenario(options: { dir: string; rate: number; seconds: number; cutMs: number; log?: Log }): Promise<DrillFigures> {
  const temporal = process.env.TEMPORAL_ADDRESS!;
  const [apiRelay, workerRelay] = await Promise.all([startTcpRelay(temporal), startTcpRelay(temporal)]);
  const receiver = await startReceiver();
  const taskQueue = `network-cut-${process.pid}-${Date.now()}`;
  const delivery = { DELIVERY_TIMEOUT: '2s', DELIVERY_INITIAL_BACKOFF: '200ms', DELIVERY_MAX_BACKOFF: '2s', DELIVERY_RETRY_WINDOW: '15m' };
  const worker = await startOwnWorker({ TEMPORAL_ADDRESS: workerRelay.address, TEMPORAL_TASK_QUEUE: taskQueue }, path.join(options.dir, 'worker.log'));
  const api = await startOwnApi({ TEMPORAL_ADDRESS: apiRelay.address, TEMPORAL_TASK_QUEUE: taskQueue, ADMIN_TOKEN, INGEST_RATE_LIMIT: '0', INGEST_START_TIMEOUT: '5s', ...delivery }, path.join(options.dir, 'api.log'));
  const cut = (relay: typeof apiRelay) => async () => {
    relay.cut();
    await sleep(options.cutMs);
    relay.restore();
  };
  try {
    return await faultDrill({
      ...options,
      apis: [api],
      workers: [worker],
      receiver,
      faults: [
        { name: `workers cut off Temporal for ${options.cutMs / 1000} s`, apply: cut(workerRelay) },
        { name: `API cut off Temporal for ${options.cutMs / 1000} s`, apply: cut(apiRelay), shows: (reading) => reading.status === 503 && reading.temporal === false },
      ],
    });
  } finally {
    await stopProcess(worker.process);
    await stopProcess(api.process);
    await receiver.close();
    await Promise.all([apiRelay.close(), workerRelay.close()]);
  }
}
