import path from 'node:path';
import { faultDrill, type DrillFigures } from './fault-drill';
import { postgresRestarts, storeAway } from './drill-faults';
import { startOwnPair } from './faults';
import { createTestDatabase, startPostgres, type PostgresServer } from './postgres';
import { startReceiver } from './receiver';
import type { Log } from './scenarios';

/**
 * Switchyard's store PostgreSQL restarted under steady single calls, as a crash
 * (`immediate`) and as an orderly stop (`fast`), with an API and a worker process of the scenario's
 * own on a PostgreSQL of its own (the run's shared one is never touched). While the database is
 * away every call must get a clear 503 with Retry-After (never a 500, never a hang), no process may
 * die (a pooled connection checked out at the restart used to end the process with an unhandled
 * 'error' event), `/health` must answer 503 and `/admin/status` name the store while it is away and
 * both be 200 once it is back, and every
 * acknowledged call must be delivered (test/helpers/fault-drill.ts drillBroken).
 *
 * `postgres`: a server the caller owns and may restart (a test file's own, started once for all its
 * tests: each start is an initdb); the scenario takes a database of its own on it and leaves it running.
 */
export async function storeRestartScenario(options: { dir: string; rate: number; seconds: number; restarts: ('fast' | 'immediate')[]; downMs: number; log?: Log; postgres?: PostgresServer }): Promise<DrillFigures> {
  const postgres = options.postgres ?? (await startPostgres(path.join(options.dir, 'postgres')));
  const receiver = await startReceiver();
  try {
    const databaseUrl = await createTestDatabase('switchyard_restart', postgres.url);
    const pair = await startOwnPair({ dir: options.dir, name: 'store-restart', env: { DATABASE_URL: databaseUrl } });
    try {
      const faults = postgresRestarts((mode, downMs) => postgres.restart(mode, downMs), options.restarts, options.downMs, storeAway);
      return await faultDrill({ ...options, apis: [pair.api], workers: [pair.worker], receiver, faults });
    } finally {
      await pair.stop();
    }
  } finally {
    await receiver.close();
    if (!options.postgres) await postgres.stop();
  }
}
