import { faultDrill, type DrillFigures, type Fault } from './fault-drill';
import { apiKill, postgresRestarts, receiverHang, relayCut } from './drill-faults';
import { startProductionShape, type ProductionShape } from './production-shape';
import { startReceiver, type Receiver } from './receiver';
import type { Log } from './scenarios';

/**
 * The fault matrix (docs/reliability.md) on the production shape, in the order a drill applies them: its one
 * PostgreSQL (Temporal's and the store's) restarted immediate then fast, Temporal's server SIGKILLed
 * and restarted, API 2 SIGKILLed mid-request and restarted, the receiver hanging, the workers' and
 * then the APIs' network to Temporal cut. The worker SIGKILL is production-shape.test.ts's own test.
 */
export function productionFaults(shape: ProductionShape, receiver: Receiver, length: { downMs: number; hangMs: number; cutMs: number; shows: Fault['shows'] }): Fault[] {
  return [
    ...postgresRestarts((mode, downMs) => shape.temporal.restartPostgres(mode, downMs), ['immediate', 'fast'], length.downMs, length.shows),
    { name: `Temporal server SIGKILL, restarted ${length.downMs / 1000} s later`, apply: () => shape.temporal.killAndRestart(length.downMs), shows: length.shows },
    apiKill(shape.apis, 1),
    receiverHang(receiver, length.hangMs),
    relayCut(shape.relays.workers, 'workers', length.cutMs),
    relayCut(shape.relays.apis, 'APIs', length.cutMs),
  ];
}

/** The whole matrix on a production shape of its own (scripts/faults.ts production-shape, full length). */
export async function productionShapeDrill(options: { dir: string; rate: number; seconds: number; downMs: number; hangMs: number; cutMs: number; log: Log }): Promise<DrillFigures> {
  const shape = await startProductionShape({ dir: options.dir, shards: 4, taskQueue: `production-drill-${process.pid}` });
  const receiver = await startReceiver();
  try {
    const faults = productionFaults(shape, receiver, { ...options, shows: (reading) => reading.status === 503 });
    return await faultDrill({ apis: shape.apis, workers: shape.workers, receiver, rate: options.rate, seconds: options.seconds, faults, log: options.log });
  } finally {
    await receiver.close();
    await shape.close();
  }
}
