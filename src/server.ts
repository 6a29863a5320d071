import { buildApp } from './api/app';
import { loadConfig } from './config';
import { createLogger } from './logger';
import { openStore } from './store';
import { connectClient } from './temporal/connection';
import { temporalDeliveries } from './temporal/deliveries';
import { temporalSyncSchedules } from './temporal/personas-schedules';

const DRAIN_LIMIT_MS = 30_000;

/** Entry point: the HTTP API. SIGTERM stops accepting, lets in-flight requests finish, then exits. */
async function main(): Promise<void> {
  const config = loadConfig();
  if (!config.adminToken) throw new Error('ADMIN_TOKEN is required (the admin API has no other protection)');
  const logger = createLogger(config.logLevel, 'switchyard-api');
  const store = await openStore({ databasePath: config.databasePath });
  const client = await connectClient(config.temporalAddress, config.temporalNamespace);
  const app = await buildApp({ config, store, deliveries: temporalDeliveries(client, config.temporalTaskQueue, config.ingestStartConcurrency), schedules: temporalSyncSchedules(client, config.temporalTaskQueue), logger });
  await app.listen({ port: config.port, host: config.host });
  const stop = async () => {
    // app.close() stops accepting and lets requests in flight finish (src/api/drain.ts); one still
    // open after this long (a client trickling its body) is cut off so the process can exit.
    setTimeout(() => app.server.closeAllConnections(), DRAIN_LIMIT_MS).unref();
    await app.close();
    await client.connection.close();
    await store.close();
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
