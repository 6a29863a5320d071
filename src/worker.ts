import { loadConfig } from './config';
import { createLogger } from './logger';
import { openStore } from './store';
import { createDeliveryWorker } from './temporal/worker';

/** Entry point: one delivery worker. SIGTERM/SIGINT finish in-flight attempts, then exit. */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, 'switchyard-worker');
  const store = await openStore({ databasePath: config.databasePath });
  const worker = await createDeliveryWorker(config, store, logger);
  logger.info({ taskQueue: config.temporalTaskQueue, temporal: config.temporalAddress }, 'worker polling');
  await worker.run();
  await store.close();
  logger.info('worker stopped');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
