import { loadConfig } from './config';
import { Lifecycle, runMain } from './lifecycle';
import { createLogger } from './logger';
import { createMetrics, serveMetrics } from './metrics';
import { loadKeyring } from './privacy/load-keyring';
import { openStore } from './store';
import { startWorkers } from './temporal/workers';
import { startTracing } from './tracing/tracing';

/** Entry point: one delivery worker process. SIGTERM/SIGINT finish in-flight attempts, then exit. */
runMain(async () => {
  const config = loadConfig();
  // Before anything opens: without keys (and PAYLOAD_ENCRYPTION=off not set) this stops, naming PAYLOAD_KEYS.
  const keyring = loadKeyring(config);
  const logger = createLogger(config.logLevel, 'switchyard-worker', config.logFormat);
  const lifecycle = new Lifecycle(logger);
  // Before the workers exist (see src/server.ts); stopped last, exporting the last attempts' spans.
  const stopTracing = await startTracing(config, 'switchyard-worker');
  if (stopTracing) lifecycle.opened('tracing', stopTracing, (stop) => stop());
  // The worker's attempts read destinations through the LISTEN/NOTIFY cache on PostgreSQL.
  const store = lifecycle.opened('store', await openStore({ ...config, destinationCacheTtlMs: config.destinationCacheTtl, keyring }), (s) => s.close());
  const metrics = createMetrics();
  if (config.metricsPort > 0) {
    lifecycle.opened('metrics endpoint', await serveMetrics(metrics, config.metricsPort, config.host), (server) => new Promise<void>((resolve) => server.close(() => resolve())));
    logger.info({ port: config.metricsPort, host: config.host }, 'serving /metrics');
  }
  const workers = lifecycle.opened('workers', await startWorkers(config, store, logger, keyring, undefined, metrics), (w) => w.close());
  logger.info({ taskQueue: config.temporalTaskQueue, personasTaskQueue: config.personasDeliveryTaskQueue, temporal: config.temporalAddress }, 'worker polling');
  // Temporal's runtime drains both workers on SIGTERM/SIGINT; then everything closes.
  await workers.run;
  await lifecycle.stop();
  logger.info('worker stopped');
});
