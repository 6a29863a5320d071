import path from 'node:path';
import { faultDrill, type DrillFigures, type Fault } from './fault-drill';
import { startOwnApi, startOwnWorker, stopProcess } from './faults';
import { createTestDatabase, startPostgres } from './postgres';
import { ADMIN_TOKEN } from './production-shape';
import { startReceiver } from './receiver';
import type { Log } from './scenarios';

/**
 * Issue 21: Switchyard's store PostgreSQL restarted under steady single calls, as a crash
 * (`immediate`) and as an orderly stop (`fast`), with an API and a worker process of the scenario's
 * own on a PostgreSQL of its own (the run's shared one is never touched). While the database is
 * away every call must get a clear 503 with Retry-After (never a 500, never a hang), no process may
 * die (a pooled connection checked out at the restart used to end the process with an unhandled
 * 'error' event), `/health` must say the store is away and then that it is back, and every
 * acknowledged call must be delivered (test/helpers/fault-drill.ts drillBroken).
 */

/** PostgreSQL restarts as drill faults: stopped in `mode`, started again `downMs` later on the same port and data. */
export const postgresRestarts = (restart: (mode: 'fast' | 'immediate', downMs: number) => Promise<void>, modes: ('fast' | 'immediate')[], downMs: number, shows?: Fault['shows']): Fault[] =>
  modes.map((mode) => ({ name: `PostgreSQL restart (${mode})`, apply: () => restart(mode, downMs), shows }));

export async function storeRestartScenario(options: { dir: string; rate: number; seconds: number; restarts: ('fast' | 'immediate')[]; downMs: number; log?: Log }): Promise<DrillFigures> {
  const postgres = await startPostgres(path.join(options.dir, 'postgres'));
  const receiver = await startReceiver();
  const databaseUrl = await createTestDatabase('switchyard_restart', postgres.url);
  const env = { DATABASE_URL: databaseUrl, TEMPORAL_TASK_QUEUE: `store-restart-${process.pid}-${Date.now()}` };
  const api = await startOwnApi({ ...env, ADMIN_TOKEN, INGEST_RATE_LIMIT: '0', DELIVERY_TIMEOUT: '2s', DELIVERY_INITIAL_BACKOFF: '200ms', DELIVERY_MAX_BACKOFF: '2s', DELIVERY_RETRY_WINDOW: '15m' }, path.join(options.dir, 'api.log'));
  const worker = await startOwnWorker(env, path.join(options.dir, 'worker.log'));
  try {
    return await faultDrill({ ...options, apis: [api], workers: [worker], receiver, faults: postgresRestarts((mode, downMs) => postgres.restart(mode, downMs), options.restarts, options.downMs, storeAway) });
  } finally {
    await stopProcess(worker.process);
    await stopProcess(api.process);
    await receiver.close();
    await postgres.stop();
  }
}

/** What /health shows while the store is away. */
export const storeAway = (reading: { status: number; store?: boolean }) => reading.status === 503 && reading.store === false;
