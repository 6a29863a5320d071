import type { Client } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { configWarnings, type Config } from '../config';
import type { Keyring } from '../privacy/keyring';
import type { Lifecycle } from '../lifecycle';
import type { Store } from '../store/types';
import { deliveriesOptions, temporalDeliveries } from '../temporal/temporal-deliveries';
import { operationalTaskQueue, temporalOperationalEvents } from '../temporal/operational-events';
import { temporalSyncSchedules } from '../temporal/temporal-sync-schedules';
import { temporalReplays } from '../temporal/replays';
import { buildApp } from './app';
import { createMetrics, type Metrics } from '../metrics';
import { keepServingOnStrayErrors } from '../stray-errors';

/** A request still open this long after a stop (a client trickling its body) is cut off so the process can exit. */
const DRAIN_LIMIT_MS = 30_000;

/**
 * The HTTP API on Temporal, listening, closed first by `lifecycle`: it stops accepting and lets
 * requests in flight finish (src/api/drain.ts) before the connections they use close. `starter`
 * starts delivery workflows (the worker's own connection when starts are eager), `client` the rest.
 * `privacy.keyring` hashes the ids the starts put into visibility and is what the codec server
 * decrypts with (the clients carry it already); undefined with PAYLOAD_ENCRYPTION=off.
 */
export async function serveApi(
  config: Config,
  store: Store,
  logger: Logger,
  lifecycle: Lifecycle,
  temporal: { client: Client; starter?: Client },
  privacy: { keyring: Keyring | undefined; codecOpenToLoopback?: boolean },
  metrics?: Metrics,
): Promise<FastifyInstance> {
  for (const warning of configWarnings(config)) logger.warn(warning);
  if (!privacy.keyring) {
    logger.warn('PAYLOAD_ENCRYPTION=off: payloads reach Temporal unencrypted, and receiver credentials (shared secrets, signing secrets, header values) are stored in plaintext (docs/privacy.md)');
  }
  const served = metrics ?? createMetrics();
  // Before the first request: a rejection nobody awaited is logged and counted, never the end of the process.
  lifecycle.opened('stray-error net', keepServingOnStrayErrors(logger, served), (release) => release());
  const deliveries = temporalDeliveries(temporal.starter ?? temporal.client, deliveriesOptions(config, privacy.keyring, temporal.starter !== undefined && config.ingestEagerStart));
  const app = await buildApp({ config, store, deliveries, schedules: temporalSyncSchedules(temporal.client, config.temporalTaskQueue), replays: temporalReplays(temporal.client, config.temporalTaskQueue), operationalEvents: temporalOperationalEvents(temporal.client, store, operationalTaskQueue(config.temporalTaskQueue), { windowMs: config.operationalEventWindow }), logger, metrics: served, ...privacy });
  lifecycle.opened('HTTP API', app, (opened) => {
    setTimeout(() => opened.server.closeAllConnections(), DRAIN_LIMIT_MS).unref();
    return opened.close();
  });
  await app.listen({ port: config.port, host: config.host });
  return app;
}
