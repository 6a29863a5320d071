import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Runtime, Worker, makeTelemetryFilterString, type InjectedSinks, type LogLevel, type Logger as TemporalLogger, type WorkflowBundleOption } from '@temporalio/worker';
import type { Logger } from 'pino';
import type { Config } from '../config';
import type { Keyring } from '../privacy/keyring';
import { switchyardDataConverter } from './data-converter';
import type { Store } from '../store/types';
import { createActivities } from '../activities';
import { HealthRecorder } from '../activities/health-recorder';
import { createFunctionSandbox } from '../functions/function-sandbox';
import { temporalRedeliveryRuns } from './redelivery-jobs';
import { temporalReplayDeliveries } from './replays';
import { startDeliveryWorkflow } from './start-delivery';
import { temporalSyncSchedules } from './temporal-sync-schedules';
import { bundlerLineLevel, sdkLineLevel } from './quiet-start';
import { loadWorkflowBundle } from './workflow-bundle';
import { slowLaneTaskQueue } from '../delivery/slow-lane';
import { watchWorker, type Metrics } from '../metrics';
import { operationalTaskQueue, temporalOperationalEvents } from './operational-events';
import type { DeliverySinks } from '../workflows/deliver-message';
import { connectWhenReachable, namespaceChecked, type TemporalConnectSettings } from './connection';
import { temporalConnectionOptions } from './connection-options';
import { cancellableRetryInterceptor } from './grpc-retry';
import type { ForwardingJob } from '../messages/forwarding-job';
import { ingestDependencies } from '../messages/ingest-dependencies';
import { deliveriesOptions, temporalDeliveries } from './temporal-deliveries';

/** Temporal's logger interface over our pino logger, so its lines follow LOG_LEVEL. */
function temporalLogger(logger: Logger, levelOf: (level: LogLevel, message: string) => LogLevel = sdkLineLevel): TemporalLogger {
  const forward = (given: LogLevel, message: string, meta?: Record<string, unknown>) => {
    const level = levelOf(given, message);
    const method = level === 'TRACE' ? 'trace' : (level.toLowerCase() as 'debug' | 'info' | 'warn' | 'error');
    logger[method](meta ?? {}, message);
  };
  return {
    log: forward,
    trace: (m, meta) => forward('TRACE', m, meta),
    debug: (m, meta) => forward('DEBUG', m, meta),
    info: (m, meta) => forward('INFO', m, meta),
    warn: (m, meta) => forward('WARN', m, meta),
    error: (m, meta) => forward('ERROR', m, meta),
  };
}

/**
 * Temporal's runtime is process-wide: install it once, routing its logs through our pino logger
 * and, with TEMPORAL_METRICS_BIND, exporting the SDK's own worker metrics for Prometheus there.
 */
let runtimeInstalled = false;
function installRuntime(logger: Logger, metricsBind: string): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  Runtime.install({
    logger: temporalLogger(logger),
    telemetryOptions: {
      logging: { filter: makeTelemetryFilterString({ core: 'WARN' }) },
      ...(metricsBind && { metrics: { prometheus: { bindAddress: metricsBind, countersTotalSuffix: true, useSecondsForDurations: true, unitSuffix: true } } }),
    },
  });
}

/** Where deliveries report how they ended (a sink: outside the sandbox, skipped on replay). */
function deliverySinks(metrics: Metrics | undefined): InjectedSinks<DeliverySinks> {
  return {
    deliveries: {
      ended: {
        // By destination; a workflow bundled before it passes statuses alone.
        fn: (_info, statuses, destinationIds?: string[]) => {
          statuses.forEach((status, i) => metrics?.deliveries.inc({ status, ...(destinationIds?.[i] !== undefined && { destination: destinationIds[i] }) }));
        },
      },
    },
  };
}

/**
 * How much one worker runs at once. The bench's bare-Temporal reference worker uses the same, so the
 * two are compared on equal terms. Local activities (first attempts) get as many slots as activities.
 */
export function workerTuning(config: Pick<Config, 'workerMaxConcurrentActivities' | 'workerMaxConcurrentWorkflowTasks'>) {
  return {
    maxConcurrentActivityTaskExecutions: config.workerMaxConcurrentActivities,
    maxConcurrentLocalActivityExecutions: config.workerMaxConcurrentActivities,
    maxConcurrentWorkflowTaskExecutions: config.workerMaxConcurrentWorkflowTasks,
    // New deliveries' first workflow tasks come from the task queue, where Temporal's fairness
    // takes turns between sources; running deliveries' later tasks come from the worker's sticky
    // queue. At the SDK's 0.2 a backlog's later tasks took most polls and a healthy source's new
    // deliveries waited in the task queue, whatever its turn: measured beside a hanging
    // destination's 300-message backlog, p95 11 s at 0.2, 1 s at 1 (docs/reliability.md).
    nonStickyToStickyPollRatio: 1,
  };
}

/**
 * Activity slots of the operational lane: its events are few (a destination's message events are
 * one per lane and OPERATIONAL_EVENT_WINDOW, not one per message), one POST each, and each carries
 * its destination as fairness key: one destination's events queued there do not hold up another's turn.
 */
const OPERATIONAL_SLOTS = 10;

/** The workers of one process run the same workflow code: bundle it once (or load `npm run build`'s bundle). */
let bundle: Promise<WorkflowBundleOption> | undefined;
const workflowBundle = (logger: Logger, configured: string) =>
  (bundle ??= loadWorkflowBundle(temporalLogger(logger, (level, message) => bundlerLineLevel(level, message, process.stdout.isTTY === true)), configured));

/**
 * A worker's connection, made once Temporal answers (the same rule as the API's client: a worker
 * started before Temporal waits for it); a Client built on it can start workflows eagerly on that worker.
 */
export function connectWorker(config: TemporalConnectSettings & Pick<Config, 'temporalMetricsBind'>, logger: Logger, timeoutMs = config.temporalConnectTimeout): Promise<NativeConnection> {
  installRuntime(logger, config.temporalMetricsBind);
  return connectWhenReachable(temporalConnectionOptions(config), { timeoutMs, logger }, async (options) =>
    namespaceChecked(await NativeConnection.connect(options), config.temporalNamespace),
  );
}

/** The two workers of one process, run together; `close` waits for them and closes the connections they opened. */
export interface Workers {
  /** Resolves when both have stopped (Temporal's runtime also stops them on SIGTERM/SIGINT). */
  run: Promise<void>;
  shutdown(): void;
  close(): Promise<void>;
}

/**
 * The delivery worker on TEMPORAL_TASK_QUEUE, and the same worker on PERSONAS_DELIVERY_TASK_QUEUE,
 * where Personas syncs start their identify deliveries: its own pollers and slots, so a
 * 100,000-member first sync neither delays the deliveries of ingested calls nor starves the sync's
 * own workflow tasks. Each of the two also has its slow lane (delivery/slow-lane.ts), an
 * activity-only worker with WORKER_SLOW_LANE_SLOTS slots. `connection` is shared when given (eager starts need the API's client on it).
 * `keyring` encrypts every payload of the workers and of their client (undefined: PAYLOAD_ENCRYPTION=off).
 */
export async function startWorkers(config: Config, store: Store, logger: Logger, keyring: Keyring | undefined, connection?: NativeConnection, metrics?: Metrics): Promise<Workers> {
  const ownConnection = connection ? undefined : await connectWorker(config, logger);
  const workerConnection = (connection ?? ownConnection)!;
  // Personas sync activities start delivery workflows and retire schedules through an ordinary client (connected on first use).
  const client = new Client({ connection: Connection.lazy({ ...temporalConnectionOptions(config), interceptors: [cancellableRetryInterceptor()] }), namespace: config.temporalNamespace, dataConverter: switchyardDataConverter(keyring) });
  // Webhook health: attempts added up in memory, flushed to the store every HEALTH_FLUSH_INTERVAL and at close.
  const health = config.healthFlushInterval > 0 ? new HealthRecorder(store, config.healthFlushInterval, logger) : undefined;
  // A tracking plan's forwarding jobs ingest into their target here, through the one ingest path
  // (its counts and violations flushed as the API's are), never forwarding again.
  const deliveries = temporalDeliveries(client, deliveriesOptions(config, keyring));
  const forwarded = ingestDependencies({ store, deliveries, config, metrics, keyring, logger });
  // What a source function emits is a sender's calls, ingested as the API ingests them: its source's
  // plan forwards its blocked calls and violations like any other source's (forwarding job ids derive
  // from the calls' messageIds, which a re-run emits again, so a retried request forwards nothing twice).
  const forward = deliveries.forward?.bind(deliveries);
  const emitted = ingestDependencies({ store, deliveries, config, metrics, keyring, logger, ...(forward && { startForwarding: (job: ForwardingJob) => forward(job, Date.now() + config.ingestStartTimeout) }) });
  // Destination functions run here, in the sandbox's threads (started on the first invocation).
  const functionSandbox = createFunctionSandbox(config);
  const activities = createActivities(store, config, {
    startDelivery: (input, taskQueue) => startDeliveryWorkflow(client, taskQueue, keyring, input),
    schedules: temporalSyncSchedules(client, config.temporalTaskQueue),
    // Bulk redelivery jobs start their redeliveries where the API starts single ones.
    redeliveries: temporalRedeliveryRuns(client, config.temporalTaskQueue, keyring),
    // Replays start their deliveries on the delivery queue, at a lower priority.
    replays: temporalReplayDeliveries(client, config.temporalTaskQueue, keyring),
    keyring,
    // Operational events start their workflows on their own lane (its own task queue and worker below).
    operationalEvents: temporalOperationalEvents(client, store, operationalTaskQueue(config.temporalTaskQueue), { windowMs: config.operationalEventWindow }),
    forwardedIngest: () => forwarded.dependencies,
    sourceFunctionIngest: () => emitted.dependencies,
  }, metrics, health, functionSandbox);
  const workflows = await workflowBundle(logger, config.workflowBundle);
  const workers = await Promise.all(
    [config.temporalTaskQueue, config.personasDeliveryTaskQueue].map((taskQueue) =>
      Worker.create({
        connection: workerConnection,
        namespace: config.temporalNamespace,
        taskQueue,
        workflowBundle: workflows,
        dataConverter: switchyardDataConverter(keyring),
        activities,
        sinks: deliverySinks(metrics),
        ...workerTuning(config),
        // Deliveries are short; let a SIGTERM'd worker finish in-flight POSTs before handing back.
        shutdownGraceTime: config.deliveryTimeout + 1_000,
      }),
    ),
  );
  // Each delivery queue's slow lane (delivery/slow-lane.ts): activities only, its own slots.
  const slowLanes = await Promise.all(
    [config.temporalTaskQueue, config.personasDeliveryTaskQueue].map((taskQueue) =>
      Worker.create({
        connection: workerConnection,
        namespace: config.temporalNamespace,
        taskQueue: slowLaneTaskQueue(taskQueue),
        dataConverter: switchyardDataConverter(keyring),
        activities,
        maxConcurrentActivityTaskExecutions: config.workerSlowLaneSlots,
        shutdownGraceTime: config.deliveryTimeout + 1_000,
      }),
    ),
  );
  workers.push(...slowLanes);
  // The operational lane, its own task queue and slots: an alert about a failing
  // destination never waits behind that destination's backlog, holds or rate limit.
  const operational = await Worker.create({
    connection: workerConnection,
    namespace: config.temporalNamespace,
    taskQueue: operationalTaskQueue(config.temporalTaskQueue),
    workflowBundle: workflows,
    dataConverter: switchyardDataConverter(keyring),
    activities,
    maxConcurrentActivityTaskExecutions: OPERATIONAL_SLOTS,
    shutdownGraceTime: config.deliveryTimeout + 1_000,
  });
  workers.push(operational);
  if (metrics) {
    watchWorker(metrics, {
      configured: () => store.webhookSwitches.configured(),
      pollers: () =>
        workers.map((worker) => {
          const status = worker.getStatus();
          return { taskQueue: worker.options.taskQueue, polling: status.runState === 'RUNNING' && (status.workflowPollerState === 'POLLING' || status.activityPollerState === 'POLLING') };
        }),
    });
  }
  const run = Promise.all(workers.map((worker) => worker.run())).then(() => undefined);
  return {
    run,
    shutdown() {
      for (const worker of workers) if (worker.getState() === 'RUNNING') worker.shutdown();
    },
    async close() {
      await run;
      // After the workers stopped, so the last attempts are in it; before the store closes.
      await health?.close();
      await Promise.all([forwarded.close(), emitted.close()]);
      await functionSandbox.close();
      await client.connection.close();
      await ownConnection?.close();
    },
  };
}
