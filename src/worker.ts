import { loadConfig } from './config';
import { createLogger } from './logger';
import { openStore } from './store';
import { createDeliveryWorker, createPersonasDeliveryWorker } from './temporal/worker';

/** Entry point: one delivery worker. SIGTERM/SIGINT finish in-flight attempts, then exit. */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, 'switchyard-worker');
  const store = await openStore({ databasePath: config.databasePath });
  const worker = await createDeliveryWorker(config, store, logger);
  const personasWorker = await createPersonasDeliveryWorker(config, store, logger);
  logger.info({ taskQueue: config.temporalTaskQueue, personasTaskQueue: config.personasDeliveryTaskQueue, temporal: config.temporalAddress }, 'worker polling');
  // Temporal's runtime drains both on SIGTERM/SIGINT.
  await Promise.all([worker.run(), personasWorker.run()]);
  await store.close();
  logger.info('worker stopped');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
