import type { Logger } from 'pino';
import { deliveryPolicy, type Config } from '../config';
import type { Metrics } from '../metrics';
import { sourcePlanReader } from '../plans/plan-reader';
import { ViolationCap } from '../plans/violation-counts';
import { StoredViolationRecorder } from '../plans/violation-recorder';
import type { Deliveries } from '../ports';
import type { Keyring } from '../privacy/keyring';
import type { Store } from '../store/types';
import { callArchiver } from './archive-calls';
import { destinationRulesReader } from './destination-rules';
import { planForwarder, type StartForwarding } from './forward-plan-calls';
import type { IngestDependencies } from './ingest-calls';
import { MessageCountRecorder } from './message-count-recorder';
import { deliveryPlanner, type PlanDecisions } from './plan-deliveries';
import { bodySealer } from './seal-bodies';
import { fateRecorder } from './record-fates';

export interface IngestWiring {
  store: Store;
  deliveries: Deliveries;
  config: Config;
  metrics?: Metrics;
  /** Seals user bodies under their subjects' data keys (undefined: PAYLOAD_ENCRYPTION=off, nothing sealed). */
  keyring?: Keyring;
  logger: Pick<Logger, 'warn'>;
  /** Where a tracking plan's forwarded calls go as durable jobs; absent where this process forwards nothing (a worker ingesting forwarded calls). */
  startForwarding?: StartForwarding;
}

/**
 * The one ingest path's dependencies as a process wires them: the API for senders' requests, a
 * worker for forwarded calls (activities/forward-calls.ts). The overview's counts and the violations
 * are flushed every HEALTH_FLUSH_INTERVAL; `close` writes the last ones.
 */
export function ingestDependencies({ store, deliveries, config, metrics, keyring, logger, startForwarding }: IngestWiring): { dependencies: IngestDependencies; close(): Promise<void> } {
  const flushMs = config.healthFlushInterval > 0 ? config.healthFlushInterval : 5_000;
  const recorder = new MessageCountRecorder(store, flushMs, metrics, logger);
  const violations = new StoredViolationRecorder(store, flushMs, metrics, logger);
  const decisions: PlanDecisions = { rulesOf: destinationRulesReader(store.destinationFilters, (message, filterId) => logger.warn({ filterId }, message), store.transformations) };
  const dependencies: IngestDependencies = {
    store,
    plans: sourcePlanReader(store.trackingPlans, (message, planId) => logger.warn({ planId }, message)),
    violations,
    ...(startForwarding && {
      forward: planForwarder(startForwarding, store, new ViolationCap(config.violationEventsPerMinute), keyring, metrics, (message, sourceId) => logger.warn({ sourceId }, message)),
    }),
    deliveries,
    planDeliveries: deliveryPlanner(store.destinations, deliveryPolicy(config), keyring && bodySealer(store.dataKeys, keyring), decisions),
    startTimeoutMs: config.ingestStartTimeout,
    metrics,
    recorder,
    // The calls and their fates grow per message: ARCHIVE_RETENTION sizes both, and 0 keeps neither.
    ...(config.archiveRetention > 0 && { archive: callArchiver(store, keyring), fates: fateRecorder(store, keyring) }),
  };
  return {
    dependencies,
    async close() {
      await Promise.all([recorder.close(), violations.close()]);
    },
  };
}
