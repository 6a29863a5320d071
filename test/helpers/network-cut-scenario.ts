import { faultDrill, type DrillFigures } from './fault-drill';
import { relayCut } from './drill-faults';
import { startOwnPair } from './faults';
import { startReceiver } from './receiver';
import type { Log } from './scenarios';
import { startTcpRelay } from './tcp-relay';

/**
 * The network between the workers and Temporal cut for a while, then between the API and
 * Temporal, under steady single calls. Each process of the scenario's own reaches the run's dev
 * server through a TCP relay of its own that the drill cuts (open connections reset, new ones
 * refused) and restores. While the worker is cut off the API keeps accepting and deliveries wait;
 * while the API is cut off it answers 503 `temporal_unavailable` with Retry-After, `/health` 503
 * and `/admin/status` says Temporal is away. Every acknowledged call is delivered once the network is back.
 */
export async function networkCutScenario(options: { dir: string; rate: number; seconds: number; cutMs: number; log?: Log }): Promise<DrillFigures> {
  const temporal = process.env.TEMPORAL_ADDRESS!;
  const [apiRelay, workerRelay] = await Promise.all([startTcpRelay(temporal), startTcpRelay(temporal)]);
  const receiver = await startReceiver();
  const pair = await startOwnPair({
    dir: options.dir,
    name: 'network-cut',
    workerEnv: { TEMPORAL_ADDRESS: workerRelay.address },
    apiEnv: { TEMPORAL_ADDRESS: apiRelay.address, INGEST_START_TIMEOUT: '5s' },
  });
  try {
    return await faultDrill({
      ...options,
      apis: [pair.api],
      workers: [pair.worker],
      receiver,
      faults: [relayCut(workerRelay, 'workers', options.cutMs), relayCut(apiRelay, 'API', options.cutMs)],
    });
  } finally {
    await pair.stop();
    await receiver.close();
    await Promise.all([apiRelay.close(), workerRelay.close()]);
  }
}
