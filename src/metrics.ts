import { createServer, type Server } from 'node:http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { MESSAGE_TYPES, type AttemptOutcome, type CallType, type DestinationStatus } from './delivery/types';

/**
 * Prometheus metrics of one process: the one place they are built. The API, the worker's
 * activities and its workflow sinks record into the instance they are handed (`npm start` hands
 * the same one to both), never into prom-client's global registry.
 *
 * Labels are closed sets (call types, route patterns, HTTP status codes, outcomes), and the
 * destination id (on attempts and deliveries too), bounded by the configured destinations
 * (forgetDestinations drops a deleted one's series), and a webhook URL's index, never its URL: no
 * write key, URL, secret, header or user id ever becomes a label, so no scrape can leak one.
 */
export interface Metrics {
  registry: Registry;
  /** Messages accepted by the ingestion API (Temporal holds a delivery workflow for each), by call type. */
  messagesIngested: Counter<'type'>;
  /** Ingestion API requests answered, by route pattern and HTTP status. */
  ingestRequests: Counter<'route' | 'status'>;
  ingestDuration: Histogram<'route'>;
  /** Webhook POSTs sent (or tried: a refused connection is a retry), by outcome and destination id. */
  deliveryAttempts: Counter<'outcome' | 'destination'>;
  attemptDuration: Histogram<'outcome'>;
  /** Deliveries of a message to one destination that ended, by how and destination id. */
  deliveries: Counter<'status' | 'destination'>;
  attemptsInFlight: Gauge;
  /**
   * Flow control, per destination id (the one id a label may carry: chosen by the operator's store, never
   * by a sender): messages that began a hold on a paused destination, and waits under its rate limit
   * or a URL's backpressure. Nothing was sent for any of them.
   */
  heldMessages: Counter<'destination'>;
  throttledWaits: Counter<'destination'>;
  backpressuredWaits: Counter<'destination'>;
  messagesFiltered: Counter<'destination' | 'reason'>;
  /** 1 for each webhook URL switched off (a 410, or an operator), by destination id and URL index; set at scrape time from the store. */
  webhookDisabled: Gauge<'destination' | 'index'>;
  /** When each of this worker's task queues last had a poll out (Unix seconds); set at scrape time. */
  workerLastPoll: Gauge<'task_queue'>;
  /**
   * 1 for each configured destination, with its source id, name and type: the Prometheus way to show
   * names beside the ids the other series carry (`* on (destination) group_left (name)`). Filled at
   * scrape time by the API (watchDestinations); a name is the operator's own words, never a secret.
   */
  destinationInfo: Gauge<'destination' | 'source' | 'name' | 'type'>;
  /** Violations of a source's tracking plan, by source id, call type and violation type (all bounded). */
  trackingPlanViolations: Counter<'source' | 'event_type' | 'violation_type'>;
  /** `Violation Generated` events not forwarded because their (source, event, field) reached its cap for the minute. */
  violationsSuppressed: Counter<'source'>;
  /** Rejections nobody awaited and exceptions outside any request that the API's safety net caught (stray-errors.ts): each one a defect. */
  strayErrors: Counter<'kind'>;
}

/** The counters that carry a destination id: bounded by the configured destinations (forgetDestinations). */
const DESTINATION_LABELLED = ['deliveryAttempts', 'deliveries', 'heldMessages', 'throttledWaits', 'backpressuredWaits', 'messagesFiltered'] as const;

export const DELIVERY_STATUSES: readonly DestinationStatus[] = ['delivered', 'failed', 'stopped'];
export const ATTEMPT_OUTCOMES: readonly AttemptOutcome['kind'][] = ['success', 'retry', 'permanent'];

export function createMetrics(options: { defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const metrics: Metrics = {
    registry,
    messagesIngested: new Counter({ name: 'switchyard_messages_ingested_total', help: 'Messages accepted by the ingestion API (a delivery workflow is held for each), by call type.', labelNames: ['type'], registers }),
    ingestRequests: new Counter({ name: 'switchyard_ingest_requests_total', help: 'Ingestion API requests answered, by route pattern and HTTP status.', labelNames: ['route', 'status'], registers }),
    ingestDuration: new Histogram({
      name: 'switchyard_ingest_request_duration_seconds',
      help: 'Time from an ingestion request arriving to its reply being sent, by route pattern.',
      labelNames: ['route'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    deliveryAttempts: new Counter({
      name: 'switchyard_delivery_attempts_total',
      help: 'Webhook POSTs this worker made, by outcome (success, retry, permanent) and destination id. Busy and deferred attempts send nothing and are not counted.',
      labelNames: ['outcome', 'destination'],
      registers,
    }),
    attemptDuration: new Histogram({
      name: 'switchyard_delivery_attempt_duration_seconds',
      help: 'Time one webhook POST took until its answer, timeout or connection error, by outcome.',
      labelNames: ['outcome'],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    }),
    deliveries: new Counter({
      name: 'switchyard_deliveries_total',
      help: 'Deliveries of a message to one destination that ended in this worker, by status (delivered, failed, stopped) and destination id.',
      labelNames: ['status', 'destination'],
      registers,
    }),
    attemptsInFlight: new Gauge({ name: 'switchyard_webhook_attempts_in_flight', help: 'Webhook POSTs this worker is waiting on right now.', registers }),
    heldMessages: new Counter({
      name: 'switchyard_delivery_held_messages_total',
      help: 'Messages whose delivery began a hold because their destination is paused, by destination id.',
      labelNames: ['destination'],
      registers,
    }),
    throttledWaits: new Counter({
      name: 'switchyard_delivery_throttled_waits_total',
      help: "Waits a message took under its destination's maxRequestsPerSecond instead of sending, by destination id.",
      labelNames: ['destination'],
      registers,
    }),
    backpressuredWaits: new Counter({
      name: 'switchyard_delivery_backpressured_waits_total',
      help: 'Waits a message took because its webhook URL answered 429 or 503 with Retry-After, by destination id.',
      labelNames: ['destination'],
      registers,
    }),
    messagesFiltered: new Counter({
      name: 'switchyard_messages_filtered_total',
      help: 'Messages a destination did not get, by destination id and the first reason that stopped them: decided at ingest (plan, integrations, consent, suppressed, filters, sampled, transformation, trigger), or by a destination function at send time (function:unsupported, function:dropped).',
      labelNames: ['destination', 'reason'],
      registers,
    }),
    webhookDisabled: new Gauge({
      name: 'switchyard_webhook_disabled',
      help: '1 for each webhook URL switched off (a 410 Gone, or an operator), by destination id and URL index (0-based). Read from the store at scrape time.',
      labelNames: ['destination', 'index'],
      registers,
    }),
    workerLastPoll: new Gauge({
      name: 'switchyard_worker_last_poll_timestamp_seconds',
      help: 'When this worker last had a poll out on each of its task queues (Unix seconds); stale means no worker is taking work from it.',
      labelNames: ['task_queue'],
      registers,
    }),
    destinationInfo: new Gauge({
      name: 'switchyard_destination_info',
      help: '1 for each configured destination, by destination id, its source id, its name and its type (webhooks or actions): join it to show names beside ids. Read from the store at scrape time, by the API.',
      labelNames: ['destination', 'source', 'name', 'type'],
      registers,
    }),
    trackingPlanViolations: new Counter({
      name: 'switchyard_tracking_plan_violations_total',
      help: "Violations of a source's tracking plan found at ingest, by source id, call type and violation type (Required, Datatype, Unplanned-Event, ...).",
      labelNames: ['source', 'event_type', 'violation_type'],
      registers,
    }),
    violationsSuppressed: new Counter({
      name: 'switchyard_tracking_plan_violations_suppressed_total',
      help: 'Violation Generated events not forwarded because their (source, event, field) reached the per-minute cap, by source id.',
      labelNames: ['source'],
      registers,
    }),
    strayErrors: new Counter({
      name: 'switchyard_stray_errors_total',
      help: 'Rejected promises nobody awaited and exceptions thrown outside any request, caught by the API process so it keeps serving; each is a defect (kind: unhandled_rejection, uncaught_exception).',
      labelNames: ['kind'],
      registers,
    }),
  };
  return metrics;
}

/**
 * A destination's attempt outcomes and delivery statuses at 0, from its first attempt on, so
 * rate() and per-destination alerts see every series of it before its first failure.
 */
export function countDestination(metrics: Pick<Metrics, 'deliveryAttempts'> & Partial<Pick<Metrics, 'deliveries'>>, destination: string): void {
  for (const outcome of ATTEMPT_OUTCOMES) metrics.deliveryAttempts.inc({ outcome, destination }, 0);
  for (const status of DELIVERY_STATUSES) metrics.deliveries?.inc({ status, destination }, 0);
}

/**
 * Drops every series of a destination that is no longer configured (deleted), so the destination
 * label stays bounded by the configured destinations however many come and go.
 */
export async function forgetDestinations(metrics: Metrics, configured: ReadonlySet<string>): Promise<void> {
  for (const name of DESTINATION_LABELLED) {
    const counter = metrics[name] as Counter<string>;
    const { values } = await counter.get();
    for (const { labels } of values) {
      if (typeof labels.destination === 'string' && !configured.has(labels.destination)) counter.remove(labels as Record<string, string>);
    }
  }
}

/** Prometheus' text format of one registry, for `GET /metrics`. */
export async function scrape(metrics: Metrics): Promise<{ contentType: string; body: string }> {
  return { contentType: metrics.registry.contentType, body: await metrics.registry.metrics() };
}

/** An ingestion call's type as a label: only the closed set of Segment call types passes. */
export function callTypeLabel(type: string): CallType | 'other' {
  return (MESSAGE_TYPES as readonly string[]).includes(type) ? (type as CallType) : 'other';
}

/**
 * The route label of an API request, or undefined when it is not an ingestion request. Always the
 * route *pattern* Fastify matched (`/v1/projects/:writeKey/settings`), never the URL: the URL may
 * carry a write key. A `/v1/...` request no route matched is `unmatched`.
 */
export function ingestRouteLabel(routePattern: string | undefined, url: string): string | undefined {
  if (routePattern !== undefined) return routePattern.startsWith('/v1/') ? routePattern : undefined;
  return url.startsWith('/v1/') ? 'unmatched' : undefined;
}

/** A bare HTTP server answering `GET /metrics` (a worker process has no API): METRICS_PORT. */
export async function serveMetrics(metrics: Metrics, port: number, host: string): Promise<Server> {
  const server = createServer((request, response) => {
    if (request.method !== 'GET' || (request.url ?? '').split('?')[0] !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    scrape(metrics).then(
      ({ contentType, body }) => response.writeHead(200, { 'content-type': contentType }).end(body),
      (err: Error) => response.writeHead(500, { 'content-type': 'text/plain' }).end(`${err.message}\n`),
    );
  });
  // Idle connections are kept as long as the API's Fastify server keeps them (72 s), longer than a
  // scraper keeps its own: with Node's default 5 s, a scrape sent on a kept connection as the server
  // closed it (the server's timer run first after a busy moment) failed with "other side closed".
  server.keepAliveTimeout = 72_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}

/** What a worker's scrape reads: the store's destinations and switched-off URLs, and its pollers. */
export interface WorkerWatch {
  configured(): Promise<{ destinationIds: ReadonlySet<string>; disabled: { destinationId: string; index: number }[] }>;
  /** Each task queue this worker polls, and whether a poll of it is out (or the poller is polling) now. */
  pollers(): { taskQueue: string; polling: boolean }[];
}

/**
 * Fills the worker's scrape-time series. `switchyard_webhook_disabled` is read from the
 * store at each scrape (a URL an operator switched back on drops out; a deleted destination's
 * series go, counters included); a task queue's last-poll time moves while its poller is polling.
 * A store that does not answer leaves the last values (the scrape itself never fails for it).
 */
export function watchWorker(metrics: Metrics, watch: WorkerWatch, clock: () => number = Date.now): void {
  // prom-client calls a metric's `collect` before reading it; its type leaves the property off the class.
  Object.assign(metrics.webhookDisabled, {
    collect: async () => {
      let configured: Awaited<ReturnType<WorkerWatch['configured']>>;
      try {
        configured = await watch.configured();
      } catch {
        return;
      }
      metrics.webhookDisabled.reset();
      for (const { destinationId, index } of configured.disabled) metrics.webhookDisabled.set({ destination: destinationId, index: String(index) }, 1);
      await forgetDestinations(metrics, configured.destinationIds);
    },
  });
  Object.assign(metrics.workerLastPoll, {
    collect: () => {
      for (const { taskQueue, polling } of watch.pollers()) if (polling) metrics.workerLastPoll.set({ task_queue: taskQueue }, clock() / 1000);
    },
  });
}

/** A destination as switchyard_destination_info names it. */
export interface DestinationLabels {
  id: string;
  sourceId: string;
  name: string;
  type: string;
}

/**
 * Fills switchyard_destination_info at each scrape from `list` (the store's destinations): a renamed
 * destination's old series goes, a deleted one's too. A store that does not answer leaves the last
 * values (the scrape itself never fails for it).
 */
export function watchDestinations(metrics: Metrics, list: () => Promise<DestinationLabels[]>): void {
  Object.assign(metrics.destinationInfo, {
    collect: async () => {
      let destinations: DestinationLabels[];
      try {
        destinations = await list();
      } catch {
        return;
      }
      metrics.destinationInfo.reset();
      for (const d of destinations) metrics.destinationInfo.set({ destination: d.id, source: d.sourceId, name: d.name, type: d.type }, 1);
    },
  });
}
