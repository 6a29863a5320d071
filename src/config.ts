import path from 'node:path';
import { parseDuration } from './delivery/duration';
import { AUDIT_LOG_KEPT_AT_LEAST_DAYS } from './store/audit-log';
import { parseCron } from './personas/cron';
import { parseAllowlist } from './delivery/egress';
import ipaddr from 'ipaddr.js';
import type { DeliveryPolicy } from './delivery/types';
import { LOG_FORMAT_SETTINGS, type LogFormatSetting } from './logger';

/**
 * Every setting Switchyard reads, with its default: the one home of configuration.
 * docs/configuration.md is generated from this list (`npm run docs:config`; a test keeps them in step).
 */
interface Setting<T> {
  env: string;
  default: string;
  description: string;
  parse: (raw: string) => T;
}

const text = (raw: string) => raw;
const integer = (raw: string) => {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`"${raw}" is not a non-negative integer`);
  return n;
};
const between = (n: number, min: number, max: number) => {
  if (n < min || n > max) throw new Error(`${n} is not between ${min} and ${max}`);
  return n;
};
const positiveInteger = (raw: string) => {
  const n = integer(raw);
  if (n < 1) throw new Error(`"${raw}" is not a positive integer`);
  return n;
};
const duration = (raw: string) => parseDuration(raw);
/** 0 (keep for ever), or at least the floor the audit log's DELETE trigger keeps (migration 0024). */
const auditRetention = (raw: string) => {
  const ms = parseDuration(raw);
  if (ms !== 0 && ms < AUDIT_LOG_KEPT_AT_LEAST_DAYS * 86_400_000) throw new Error(`"${raw}" is shorter than ${AUDIT_LOG_KEPT_AT_LEAST_DAYS}d, the least the audit log keeps; use 0 to keep every row`);
  return ms;
};
const autoOrDuration = (raw: string): number | 'auto' => (raw === 'auto' ? 'auto' : duration(raw));
const boolean = (raw: string) => {
  if (raw !== 'true' && raw !== 'false') throw new Error(`"${raw}" is not true or false`);
  return raw === 'true';
};
const logFormatSetting = (raw: string): LogFormatSetting => {
  if (!(LOG_FORMAT_SETTINGS as readonly string[]).includes(raw)) throw new Error(`"${raw}" is not one of ${LOG_FORMAT_SETTINGS.join(', ')}`);
  return raw as LogFormatSetting;
};
const onOff = (raw: string) => {
  if (raw !== 'on' && raw !== 'off') throw new Error(`"${raw}" is not on or off`);
  return raw === 'on';
};
const list = (raw: string) => raw.split(',').map((s) => s.trim()).filter(Boolean);
const cidrs = (raw: string) => {
  const entries = list(raw);
  parseAllowlist(entries);
  return entries;
};

/** `*` (any page) or the exact origins `scheme://host[:port]` a browser sends in its Origin header. */
const corsOrigins = (raw: string): '*' | string[] => {
  const origins = list(raw);
  if (origins.includes('*')) {
    if (origins.length > 1) throw new Error('"*" allows every origin; list origins without it, or use "*" alone');
    return '*';
  }
  if (origins.length === 0) throw new Error('is empty; use "*" or comma-separated origins such as https://shop.example.com');
  for (const origin of origins) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    if (!parsed || !/^https?:$/.test(parsed.protocol) || parsed.origin !== origin) throw new Error(`"${origin}" is not an origin such as https://shop.example.com (scheme, host and port only, no path or trailing slash)`);
  }
  return origins;
};
/** Exact origins only (no `*`): a codec server answers with decrypted data, so every origin is named. Empty: none. */
const exactOrigins = (raw: string): string[] => {
  if (list(raw).length === 0) return [];
  const origins = corsOrigins(raw);
  if (origins === '*') throw new Error('"*" is not allowed here: name each Temporal Web UI origin, e.g. http://localhost:8233');
  return origins;
};
/** An absolute http(s) URL without query or fragment, kept without its trailing slash. */
const publicUrl = (raw: string) => {
  if (raw === '') return '';
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new Error(`"${raw}" is not an absolute URL such as https://events.example.com`);
  }
  if (!/^https?:$/.test(parsed.protocol) || parsed.search || parsed.hash || parsed.username || parsed.password) {
    throw new Error(`"${raw}" must be an http or https URL without credentials, query or fragment, such as https://events.example.com`);
  }
  return parsed.href.replace(/\/+$/, '');
};
/** OpenTelemetry's exporter choice for traces: only OTLP is built in; `none` (or empty without an endpoint) is off. */
const tracesExporter = (raw: string): '' | 'otlp' | 'none' => {
  if (raw !== '' && raw !== 'otlp' && raw !== 'none') throw new Error(`"${raw}" is not otlp or none`);
  return raw;
};
/** Empty, or an absolute http(s) URL (the collector's). */
/** `raw` as a URL, or undefined when it is none. */
const urlOrUndefined = (raw: string): URL | undefined => {
  try {
    return new URL(raw);
  } catch {
    return undefined;
  }
};
const otlpUrl = (raw: string) => {
  if (raw === '') return '';
  const parsed = urlOrUndefined(raw);
  if (!parsed || !/^https?:$/.test(parsed.protocol)) throw new Error(`"${raw}" is not an http or https URL such as http://otel-collector:4318`);
  return raw;
};
const otlpProtocol = (raw: string): 'http/protobuf' | 'http/json' => {
  if (raw !== 'http/protobuf' && raw !== 'http/json') throw new Error(`"${raw}" is not http/protobuf or http/json`);
  return raw;
};
/** Empty, or a `postgres://` / `postgresql://` URL (checked here so a typo fails at start-up, not at first query). */
const databaseUrl = (raw: string) => {
  if (raw === '') return '';
  const parsed = urlOrUndefined(raw);
  // Never echo the value: it usually holds the password.
  if (!parsed || !/^postgres(ql)?:$/.test(parsed.protocol) || !parsed.hostname) throw new Error('is not a PostgreSQL URL such as postgres://user:password@host:5432/switchyard');
  return raw;
};
/**
 * What Fastify's `trustProxy` accepts: a boolean, a hop count, or the proxies' addresses/CIDRs (and
 * proxy-addr's names). Fastify 5 reads a bare number as "trust nothing", so src/api/client-address.ts
 * hands a hop count to it as proxy-addr's trust-the-nearest-N function.
 */
const PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'];
const trustProxy = (raw: string): boolean | number | string[] => {
  if (raw === 'true' || raw === 'false') return raw === 'true';
  if (/^\d+$/.test(raw)) {
    if (Number(raw) < 1) throw new Error(`"${raw}": a hop count is at least 1 (false trusts no proxy)`);
    return Number(raw);
  }
  const entries = list(raw);
  if (entries.length === 0) throw new Error('is empty; use false, true, a hop count or comma-separated proxy addresses/CIDRs');
  for (const entry of entries) {
    const valid = PROXY_NAMES.includes(entry) || ipaddr.isValid(entry) || (() => {
      try {
        ipaddr.parseCIDR(entry);
        return true;
      } catch {
        return false;
      }
    })();
    if (!valid) throw new Error(`"${entry}" is not true, false, a hop count, an IP address, a CIDR or one of ${PROXY_NAMES.join(', ')}`);
  }
  return entries;
};
/** The admin token opens every decrypted payload: one long enough that guessing it is hopeless, even unthrottled. Never echoed. */
const ADMIN_TOKEN_MIN_LENGTH = 32;
const adminToken = (raw: string) => {
  if (raw !== '' && raw.length < ADMIN_TOKEN_MIN_LENGTH) throw new Error(`is shorter than ${ADMIN_TOKEN_MIN_LENGTH} characters; generate one with \`openssl rand -base64 32\``);
  return raw;
};

export const SETTINGS = {
  port: { env: 'PORT', default: '8080', description: 'Port of the HTTP API (ingestion, admin, health).', parse: integer },
  host: { env: 'HOST', default: '127.0.0.1', description: 'Address the HTTP API (and a worker\'s `/metrics`) listens on. The default, loopback, keeps a quick start off the network; the image and docker-compose.yml set `0.0.0.0` to listen on every interface.', parse: text },
  dataDir: { env: 'DATA_DIR', default: './data', description: 'Folder for the SQLite settings store and the embedded Temporal dev server database.', parse: text },
  databasePath: { env: 'DATABASE_PATH', default: '', description: 'SQLite file for the store when `DATABASE_URL` is empty (default `$DATA_DIR/switchyard.db`); one machine only: the API and worker processes must share the file.', parse: text },
  databaseUrl: { env: 'DATABASE_URL', default: '', description: 'PostgreSQL for sources, destinations, regulations, profiles and Personas snapshots (`postgres://user:password@host:5432/switchyard`, libpq parameters such as `?sslmode=require` allowed): what lets any number of API and worker processes on any machines share one store. Empty: the SQLite file `DATABASE_PATH`. The password never appears in logs or errors.', parse: databaseUrl },
  databaseMigrate: { env: 'DATABASE_MIGRATE', default: 'on', description: '`on`: every process brings the store\'s schema up to date when it starts (PostgreSQL: under an advisory lock; SQLite: in one transaction). `off`: it only checks, and refuses to start naming the migrations not applied and `npm run migrate`, the command that applies them (for a database role without DDL rights, migrated by a deploy step). Either way a store migrated by a newer version stops the start.', parse: onOff },
  adminToken: { env: 'ADMIN_TOKEN', default: '', description: 'The bootstrap Bearer token for the admin API, the portal and the codec server, with every scope (mint scoped `swy_` tokens with it: docs/operations.md, Access and audit): at least 32 characters (`openssl rand -base64 32`); a shorter one stops start-up. `npm start` generates and prints one when unset; `server.ts` refuses to start without it.', parse: adminToken },
  adminTokenFailureLimit: { env: 'ADMIN_TOKEN_FAILURE_LIMIT', default: '10', description: 'Wrong admin tokens one client address may present per `ADMIN_TOKEN_FAILURE_WINDOW`, per API process, counted together on the admin API, the portal\'s login and the codec server. Beyond it every request from that address, with a token right or wrong or with none, is answered 429 with Retry-After until the window ends, and nothing more of it goes to the audit log. A request without a token does not count (and writes no audit row, only a log line). `0` switches it off.', parse: integer },
  adminTokenFailureWindow: { env: 'ADMIN_TOKEN_FAILURE_WINDOW', default: '1m', description: 'The window `ADMIN_TOKEN_FAILURE_LIMIT` counts over.', parse: duration },
  logLevel: { env: 'LOG_LEVEL', default: 'info', description: 'pino log level (trace, debug, info, warn, error, silent).', parse: text },
  logFormat: { env: 'LOG_FORMAT', default: 'auto', description: 'Log line format: `pretty` (human-readable), `json` (one JSON object a line), or `auto`: pretty when stdout is a terminal, JSON otherwise. When stdout is not a terminal the workflow bundler\'s webpack report is logged at `debug` (`Workflow bundle created` stays at `info`); the SDK\'s "No workflows registered" for the activity-only slow lanes is `debug` always.', parse: logFormatSetting },
  temporalAddress: { env: 'TEMPORAL_ADDRESS', default: '127.0.0.1:7233', description: 'Temporal frontend gRPC address.', parse: text },
  temporalNamespace: { env: 'TEMPORAL_NAMESPACE', default: 'default', description: 'Temporal namespace for delivery workflows.', parse: text },
  temporalTaskQueue: { env: 'TEMPORAL_TASK_QUEUE', default: 'switchyard-delivery', description: 'Task queue the API starts workflows on and the worker polls.', parse: text },
  temporalUiPort: { env: 'TEMPORAL_UI_PORT', default: '8233', description: 'Web UI port of the embedded dev server started by `npm start`.', parse: integer },
  temporalUiUrl: { env: 'TEMPORAL_UI_URL', default: '', description: 'Base URL of the Temporal Web UI the portal links each delivery to (e.g. `https://temporal.example.com`). Empty: `http://127.0.0.1:$TEMPORAL_UI_PORT`, the embedded dev server\'s UI under `npm start`.', parse: text },
  embeddedTemporal: { env: 'EMBEDDED_TEMPORAL', default: 'true', description: '`npm start` starts a Temporal dev server (SQLite under `$DATA_DIR`) unless this is `false`.', parse: (raw: string) => raw !== 'false' },
  temporalTls: { env: 'TEMPORAL_TLS', default: '', description: 'Whether to reach Temporal over TLS: `true` (the system\'s root CAs unless `TEMPORAL_TLS_CA`), `false`, or empty: TLS exactly when one of `TEMPORAL_TLS_CA`, `TEMPORAL_TLS_CERT`, `TEMPORAL_TLS_SERVER_NAME` or `TEMPORAL_API_KEY` is set.', parse: (raw: string) => (raw === '' ? undefined : boolean(raw)) },
  temporalTlsCa: { env: 'TEMPORAL_TLS_CA', default: '', description: 'PEM file of the CA that signed the Temporal frontend\'s certificate (a private CA); empty trusts the system\'s root CAs. Read at start-up.', parse: text },
  temporalTlsCert: { env: 'TEMPORAL_TLS_CERT', default: '', description: 'PEM file of the client certificate for mutual TLS (with `TEMPORAL_TLS_KEY`; both or neither). Read at start-up.', parse: text },
  temporalTlsKey: { env: 'TEMPORAL_TLS_KEY', default: '', description: 'PEM file of the private key of `TEMPORAL_TLS_CERT`. Read at start-up.', parse: text },
  temporalTlsServerName: { env: 'TEMPORAL_TLS_SERVER_NAME', default: '', description: 'Name to verify the Temporal frontend\'s certificate against (and send as SNI) when it is not the host of `TEMPORAL_ADDRESS`.', parse: text },
  temporalApiKey: { env: 'TEMPORAL_API_KEY', default: '', description: 'API key (Temporal Cloud) or JWT sent as `Authorization: Bearer` on every Temporal call; implies TLS unless `TEMPORAL_TLS=false`. Never logged, never in errors or workflow history.', parse: text },
  temporalConnectTimeout: { env: 'TEMPORAL_CONNECT_TIMEOUT', default: '5m', description: 'How long an API or worker process starting while Temporal is unreachable waits for it (logging "waiting for Temporal at …" every 10 s) before it exits; `0` waits forever. A refused TLS handshake or refused credentials stop start-up at once.', parse: duration },
  deliveryRetryWindow: { env: 'DELIVERY_RETRY_WINDOW', default: '4h', description: 'Hard deadline, from the start of its delivery, for retrying a message (seed: 4 hours).', parse: duration },
  deliveryTimeout: { env: 'DELIVERY_TIMEOUT', default: '5s', description: 'Time a webhook has to answer one attempt (seed: 5 seconds).', parse: duration },
  deliveryInitialBackoff: { env: 'DELIVERY_INITIAL_BACKOFF', default: '1s', description: 'Wait before the second round of attempts; doubles each round, with jitter.', parse: duration },
  deliveryMaxBackoff: { env: 'DELIVERY_MAX_BACKOFF', default: '10m', description: 'Longest wait between two rounds of attempts (a `Retry-After` may ask for more, up to the window).', parse: duration },
  deliveryMaxHold: { env: 'DELIVERY_MAX_HOLD', default: '72h', description: 'Longest a message\'s delivery to one destination may wait without sending, in all: the destination paused (`paused: true`), throttled (`maxRequestsPerSecond`) or its URL under backpressure (429/503 with Retry-After). Held time does not count against `DELIVERY_RETRY_WINDOW`; past this the delivery fails with that reason.', parse: duration },
  deliveryHoldCheckInterval: { env: 'DELIVERY_HOLD_CHECK_INTERVAL', default: '5m', description: 'Longest wait between two checks of a held delivery whether its paused destination was resumed: the checks start at 0.5 s and double up to this, so a long pause costs few workflow events and a resumed destination sends within about this long.', parse: duration },
  deliveryFirstAttemptLocal: { env: 'DELIVERY_FIRST_ATTEMPT_LOCAL', default: 'true', description: 'Run the first attempt of a message to each destination as a Temporal local activity inside the workflow task (about half the Temporal server work per delivered message; later attempts are regular activities). `false` makes every attempt a regular activity.', parse: boolean },
  operationalEventWindow: { env: 'OPERATIONAL_EVENT_WINDOW', default: '5m', description: 'Operational webhooks: `message.attempt.failing`, `message.attempt.exhausted` and `message.attempt.recovered` are raised once per delivery lane (a destination, and its webhook URL or mapping) and window of this length (counted from the epoch, so a burst across a window\'s end raises one more), whatever the number of messages: the first message of the window to reach the state names it, and the others raise nothing. `0`: once per message and delivery run, as Svix does (a receiver refusing every message then raises one event per message). Read by the worker.', parse: duration },
  personasSyncSchedule: { env: 'PERSONAS_SYNC_SCHEDULE', default: '*/15 * * * *', description: 'Cron expression (UTC) of the Temporal Schedule of an audience or computed trait created without a `schedule`.', parse: parseCron },
  personasSyncPageSize: { env: 'PERSONAS_SYNC_PAGE_SIZE', default: '500', description: 'Changed profiles one Personas sync activity reads and starts identify deliveries for (the worker\'s setting).', parse: (raw: string) => between(integer(raw), 1, 10_000) },
  personasDeliveryTaskQueue: { env: 'PERSONAS_DELIVERY_TASK_QUEUE', default: '', description: 'Task queue of the identify deliveries Personas syncs start (default `$TEMPORAL_TASK_QUEUE-personas`). The worker polls it beside `TEMPORAL_TASK_QUEUE` with its own slots, so a large sync never delays the delivery of ingested calls nor waits behind its own deliveries.', parse: text },
  workerMaxConcurrentActivities: { env: 'WORKER_MAX_CONCURRENT_ACTIVITIES', default: '200', description: 'Webhook POSTs one worker runs at once (first attempts, run as local activities, get as many slots again).', parse: integer },
  workerMaxConcurrentWorkflowTasks: { env: 'WORKER_MAX_CONCURRENT_WORKFLOW_TASKS', default: '100', description: 'Workflow tasks one worker runs at once.', parse: integer },
  egressAllowlist: { env: 'EGRESS_ALLOWLIST', default: '', description: 'Comma-separated CIDRs that webhooks may reach although they are not public addresses (e.g. `127.0.0.0/8` for local receivers). Every other loopback, private, link-local (incl. 169.254.169.254), CGNAT, unique-local, IPv4-mapped or otherwise non-global address is refused at connection time; an operational endpoint whose URL names such an address (or `localhost`) is refused when saved.', parse: cidrs },
  functionTimeout: { env: 'FUNCTION_TIMEOUT', default: '5s', description: 'Wall time one invocation of a function (a Segment-style destination function, or a test run) has, its `fetch` calls included; past it the invocation ends as a timeout (retried within the message\'s window) within about 100 ms, even inside a long native operation (the sandbox thread is then replaced).', parse: (raw: string) => between(duration(raw), 100, 60_000) },
  sourceFunctionRetryInitial: { env: 'SOURCE_FUNCTION_RETRY_INITIAL', default: '2m', description: 'A source function request\'s first wait before it is tried again after a RetryError or a timeout: each wait is between half and one and a half times its base (1–3 minutes by default, as Segment waits), the base doubling after each of the six retries.', parse: (raw: string) => between(duration(raw), 1, 3_600_000) },
  sourceFunctionRetryMax: { env: 'SOURCE_FUNCTION_RETRY_MAX', default: '20m', description: 'Longest wait between two tries of a source function request (Segment: 20 minutes).', parse: (raw: string) => between(duration(raw), 1, 86_400_000) },
  functionMemoryLimit: { env: 'FUNCTION_MEMORY_LIMIT', default: '64', description: 'Memory, in MiB, one function\'s module state may use in its sandbox (QuickJS heap); past it the invocation fails as out of memory and its module state is started afresh.', parse: (raw: string) => between(integer(raw), 8, 1024) },
  functionThreads: { env: 'FUNCTION_THREADS', default: '2', description: 'Sandbox threads a process runs functions on, off its event loop; one function instance and version always runs on the same thread (its module state lives there).', parse: (raw: string) => between(positiveInteger(raw), 1, 64) },
  signingSecretOverlap: { env: 'SIGNING_SECRET_OVERLAP', default: '24h', description: 'After a destination\'s Standard Webhooks `signingSecret` is replaced, how long the previous secret keeps signing too (receivers may verify with either). A PATCH may set its own `signingSecretOverlap`.', parse: duration },
  ingestStartConcurrency: { env: 'INGEST_START_CONCURRENCY', default: '32', description: 'Workflow starts one ingestion request keeps in flight at once (a `/v1/batch` of 100 messages is 100 starts; Temporal has no batch start).', parse: positiveInteger },
  ingestEagerStart: { env: 'INGEST_EAGER_START', default: 'true', description: 'When the API and worker run in one process (`npm start`), ask Temporal to hand each new delivery workflow\'s first task straight back to this process\'s worker in the start reply (eager workflow start) instead of through the task queue. No effect when the API runs alone (`src/server.ts`).', parse: boolean },
  ingestRateLimit: { env: 'INGEST_RATE_LIMIT', default: '500', description: 'Ingestion requests one write key may make per `INGEST_RATE_WINDOW`, per API process; beyond it the API answers 429 with Retry-After. `0` switches the limit off.', parse: integer },
  ingestUnauthenticatedRateLimit: { env: 'INGEST_UNAUTHENTICATED_RATE_LIMIT', default: '20', description: 'Requests one client address may make per `INGEST_RATE_WINDOW` without a valid write key (missing or unknown), on the ingestion and source settings routes, per API process. Once an address has used them up, every request from it without a write key the API knows is answered 429 with Retry-After, before its key is looked up, until the window ends: a spray of random write keys costs no store lookups. A valid key is never refused for its neighbours\' failures: each API keeps every source\'s write-key hash in memory and answers a known key before this limit (a source made or deleted is heard at once on PostgreSQL and in the process that made the change, within a second on SQLite from another process). Behind proxies the address is the one `TRUST_PROXY` makes out. `0` switches it off.', parse: integer },
  ingestRateWindow: { env: 'INGEST_RATE_WINDOW', default: '1s', description: 'The windows `INGEST_RATE_LIMIT` and `INGEST_UNAUTHENTICATED_RATE_LIMIT` count over.', parse: duration },
  workerMaxInFlightPerWebhook: { env: 'WORKER_MAX_IN_FLIGHT_PER_WEBHOOK', default: '20', description: 'Attempts to one webhook URL of one destination a worker runs at once; more come back at once as retryable ("webhook busy") so a hanging or slow receiver holds at most this many of the worker\'s activity slots. `0` means no cap.', parse: integer },
  workerSlowLaneSlots: { env: 'WORKER_SLOW_LANE_SLOTS', default: '20', description: 'Attempts one worker runs at once in the slow lane: attempts that found their webhook busy (`WORKER_MAX_IN_FLIGHT_PER_WEBHOOK` reached, as with a receiver that hangs) wait there, on the task queue `<delivery queue>-slow-lane` with their destination as Temporal fairness key, for their turn, instead of asking again through the delivery queue. Waiting there holds one of these slots, never one of `WORKER_MAX_CONCURRENT_ACTIVITIES`.', parse: positiveInteger },
  destinationCacheTtl: { env: 'DESTINATION_CACHE_TTL', default: '5s', description: 'On PostgreSQL, how long a worker may reuse a destination, the answer to whether a user was erased, or a data key of a user, that it read for its attempts. Every change (switched off, a new secret, a URL switched off, a regulation, a data key destroyed or made) reaches the worker at once through LISTEN/NOTIFY and drops its copy; this bounds the age of a copy only if a notification were lost. While the LISTEN connection of the worker is down nothing is cached. `0` turns the cache off; SQLite never caches (local reads are microseconds).', parse: duration },
  metricsPort: { env: 'METRICS_PORT', default: '0', description: 'Port on which a worker process (`src/worker.ts`) serves Prometheus `GET /metrics` (on `HOST`, no auth). `0` serves none. The API, and `npm start`\'s combined process, serve `/metrics` on `PORT` whatever this says.', parse: integer },
  tracesExporter: { env: 'OTEL_TRACES_EXPORTER', default: '', description: 'Tracing (OpenTelemetry, W3C trace context; docs/operations.md "Tracing"): `otlp` exports spans over OTLP/HTTP, `none` switches tracing off. Empty: `otlp` when `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT` is set, off otherwise. Off, no OpenTelemetry SDK is loaded, no span is made and no trace header is sent.', parse: tracesExporter },
  otlpEndpoint: { env: 'OTEL_EXPORTER_OTLP_ENDPOINT', default: '', description: 'Base URL of an OTLP/HTTP collector (e.g. `http://otel-collector:4318`); spans go to `<this>/v1/traces`. Other `OTEL_EXPORTER_OTLP_*` variables (`_HEADERS`, `_TIMEOUT`, `_COMPRESSION`, certificates) are read by the exporter itself.', parse: otlpUrl },
  otlpTracesEndpoint: { env: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', default: '', description: 'Full URL spans are POSTed to (e.g. `http://otel-collector:4318/v1/traces`), used as is; wins over `OTEL_EXPORTER_OTLP_ENDPOINT`.', parse: otlpUrl },
  otlpTracesProtocol: { env: 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', default: 'http/protobuf', description: 'How spans are encoded: `http/protobuf` or `http/json` (OTLP over HTTP; gRPC is not offered).', parse: otlpProtocol },
  serviceName: { env: 'OTEL_SERVICE_NAME', default: '', description: 'The `service.name` of exported spans. Empty: the process\'s own name, `switchyard-api`, `switchyard-worker` or `switchyard` (`npm start`).', parse: text },
  bspScheduleDelay: { env: 'OTEL_BSP_SCHEDULE_DELAY', default: '5000', description: 'Milliseconds between two exports of finished spans (OpenTelemetry\'s batch span processor; it also exports as soon as 512 spans wait, and at shutdown).', parse: positiveInteger },
  temporalMetricsBind: { env: 'TEMPORAL_METRICS_BIND', default: '', description: 'Address (`host:port`, e.g. `127.0.0.1:9464`) where the Temporal SDK\'s own worker metrics (`temporal_*`: task slots, poll and schedule latencies, sticky cache) are exported for Prometheus at `/metrics`, by its process-wide runtime. Empty exports none.', parse: text },
  healthFlushInterval: { env: 'HEALTH_FLUSH_INTERVAL', default: '5s', description: 'How often a worker adds the webhook health it counted in memory (attempts per destination, URL and minute: outcomes, a latency histogram, the last error) to the store, for `GET /admin/destinations/:id/health`; also at shutdown. A worker that crashes loses at most this much of its counts. `0` records no health (the route then shows only switched-off URLs).', parse: duration },
  healthPollerWindow: { env: 'HEALTH_POLLER_WINDOW', default: '70s', description: '`GET /admin/status` counts a worker as alive while Temporal saw it poll a task queue within this long. A live idle worker polls again at least every 60 s (Temporal\'s long-poll interval), so a worker that died shows as missing within this window. (`/health`, the load balancer\'s route, does not look at workers.)', parse: duration },
  httpHeadersTimeout: { env: 'HTTP_HEADERS_TIMEOUT', default: '10s', description: 'Time a client has to send a request\'s headers (slowloris defence); past it the API answers 408 and closes the connection.', parse: duration },
  httpRequestTimeout: { env: 'HTTP_REQUEST_TIMEOUT', default: '30s', description: 'Time a client has to send a whole request, body included (at least `HTTP_HEADERS_TIMEOUT`); past it the API answers 408. `0` switches it off.', parse: duration },
  corsOrigins: { env: 'CORS_ORIGINS', default: '*', description: 'Web pages (origins, e.g. `https://shop.example.com`) whose browsers may send to the ingestion routes and read the source settings route (CORS), comma-separated; `*` allows any page. The admin API never answers cross-origin requests.', parse: corsOrigins },
  publicUrl: { env: 'PUBLIC_URL', default: '', description: 'URL at which clients reach this API (e.g. `https://events.example.com`); the source settings route tells browser and mobile libraries to send to `<PUBLIC_URL>/v1`, whatever the request\'s headers say, and lets shared caches (a CDN) keep the answer. Empty: taken from each settings request (its `Host` and protocol, `X-Forwarded-Host`/`-Proto` when `TRUST_PROXY` allows; the answer is then `Cache-Control: private` with `Vary` on those headers, and the API warns at start).', parse: publicUrl },
  trustProxy: { env: 'TRUST_PROXY', default: 'false', description: 'Which proxies in front of the API are trusted, whose `X-Forwarded-For`/`-Proto`/`-Host` count (for `context.ip`, the settings route and the per-address limits), as Fastify\'s `trustProxy`: `false`; a hop count such as `1` (recommended: the number of proxies every request passes, so the client address is the one your nearest proxy saw); the proxies\' comma-separated addresses/CIDRs (also `loopback`, `linklocal`, `uniquelocal`); or `true`, which trusts every hop: `context.ip` is then the leftmost `X-Forwarded-For` entry, which the client chooses, and the per-address limits key on the entry your nearest proxy appended instead. With a hop count or `true`, the API must be reachable only through the proxies.', parse: trustProxy },
  payloadEncryption: { env: 'PAYLOAD_ENCRYPTION', default: 'on', description: '`on`: every payload Switchyard puts into Temporal (workflow and activity inputs and results, memos, summaries, failure messages) is encrypted with AES-256-GCM under the active key of `PAYLOAD_KEYS`, and user ids in visibility are keyed hashes (docs/privacy.md). `off` (on purpose only): plaintext, as before; `src/server.ts` and `src/worker.ts` refuse to start without keys unless this says `off`.', parse: onOff },
  workflowBundle: { env: 'WORKFLOW_BUNDLE', default: '', description: 'A prebuilt workflow bundle for the workers to load instead of bundling the workflow code with webpack at start (seconds of CPU per worker process): the file `npm run build` writes as `dist/workflow-bundle.js`, which a compiled worker loads by itself. For several workers started from source on one machine, such as the test run\'s. Empty: that file when compiled, else bundle at start.', parse: text },
  payloadKeys: { env: 'PAYLOAD_KEYS', default: '', description: 'The master keys: comma-separated `id=base64` entries, each a 32-byte key (`openssl rand -base64 32`). New payloads use the active key; every listed key still decrypts what it encrypted. Rotate by adding a key and making it active. `npm start` creates and keeps a development key in `$DATA_DIR/payload-keys` when neither this nor `PAYLOAD_KEYS_FILE` is set. Never logged.', parse: text },
  payloadKeysFile: { env: 'PAYLOAD_KEYS_FILE', default: '', description: 'A file holding what `PAYLOAD_KEYS` would (entries one a line or comma-separated; `#` comments), for a secret mounted as a file. Read at start-up.', parse: text },
  payloadActiveKey: { env: 'PAYLOAD_ACTIVE_KEY', default: '', description: 'Id of the key that encrypts new payloads. Empty: the last key listed.', parse: text },
  payloadHashKey: { env: 'PAYLOAD_HASH_KEY', default: '', description: 'Id of the key whose HMAC hides user and anonymous ids in visibility, workflow ids and regulation records. Empty: the first key listed. Keep it listed and unchanged as long as old deliveries should be found by user id.', parse: text },
  codecCorsOrigins: { env: 'CODEC_CORS_ORIGINS', default: '', description: 'Temporal Web UI origins (e.g. `https://cloud.temporal.io`, `http://localhost:8233`), comma-separated, whose browsers may call the codec server at `/codec/decode` and `/codec/encode` (CORS, with credentials); `*` is refused. Empty: none (the `temporal` CLI needs no CORS). `npm start` adds its own Web UI\'s origin.', parse: exactOrigins },
  archiveRetention: { env: 'ARCHIVE_RETENTION', default: '7d', description: 'How long every accepted message is kept in the archive, sealed under its user\'s data key, for replays (`POST /admin/replays`). PostgreSQL keeps it in one partition a day and drops a day\'s partition once the whole day is past this (rows live up to a day longer, but no replay reads them); SQLite deletes the rows every hour. `0` switches the archive off: nothing is written and replays are refused.', parse: duration },
  auditRetention: { env: 'AUDIT_RETENTION', default: '0', description: 'How long the audit log keeps a row: every API process deletes the older rows at start and then hourly. `0` (the default) keeps every row for ever. At least `90d`: the database itself refuses to delete a younger row, whatever asks.', parse: auditRetention },
  replayMaxInFlight: { env: 'REPLAY_MAX_IN_FLIGHT', default: '50', description: 'Deliveries one replay keeps under way at once, at most (the replay workflow starts the next page only when there is room). Below it the replay is paced by live traffic (REPLAY_LIVE_LAG_LIMIT). The destination\'s `maxRequestsPerSecond` counts replayed requests with live ones.', parse: positiveInteger },
  replayLiveLagLimit: { env: 'REPLAY_LIVE_LAG_LIMIT', default: 'auto', description: 'Live traffic first: how long live messages may wait, from receipt to their first request (90th percentile over 5 s, in the worker running the replay\'s page), before a replay halves its pace; under it the pace grows by one delivery per second each 5 s. `auto`: 25 % over the unhurried lag, the median of the last 10 minutes\' windows in which the worker sent no replayed request (the replay rests 10 s every 2 minutes to measure it). A duration (`200ms`) sets it outright.', parse: autoOrDuration },
  violationEventsPerMinute: { env: 'VIOLATION_EVENTS_PER_MINUTE', default: '10', description: '`Violation Generated` events forwarded (schema controls\' `forwardingViolationsTo`) per source, rule (the event, or the call type) and violation type each minute, at most, per API process, and 100 times as many per source whatever the rule; the rest are suppressed and counted in `switchyard_tracking_plan_violations_suppressed_total`.', parse: positiveInteger },
  ingestStartTimeout: { env: 'INGEST_START_TIMEOUT', default: '10s', description: 'How long an ingestion request waits for Temporal to accept its workflow starts before answering 503 (retryable; re-sending the same messageIds is safe).', parse: duration },
} satisfies Record<string, Setting<unknown>>;

type Settings = typeof SETTINGS;
export type Config = { [K in keyof Settings]: ReturnType<Settings[K]['parse']> };

/** Reads the environment once; a bad value stops start-up with the variable's name and the rule. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const config = {} as Record<string, unknown>;
  for (const [key, setting] of Object.entries(SETTINGS) as [keyof Settings, Setting<unknown>][]) {
    const raw = env[setting.env] ?? setting.default;
    try {
      config[key] = setting.parse(raw);
    } catch (err) {
      throw new Error(`Invalid ${setting.env}: ${(err as Error).message}`);
    }
  }
  const result = { ...(config as Config), ...overrides };
  if (result.httpRequestTimeout > 0 && result.httpHeadersTimeout > result.httpRequestTimeout) {
    throw new Error('Invalid HTTP_HEADERS_TIMEOUT: it must not be longer than HTTP_REQUEST_TIMEOUT');
  }
  if (!result.databasePath) result.databasePath = path.join(result.dataDir, 'switchyard.db');
  if (!result.personasDeliveryTaskQueue) result.personasDeliveryTaskQueue = `${result.temporalTaskQueue}-personas`;
  return result;
}

/** What a valid configuration may still get wrong, for the operator to read at start-up. */
export function configWarnings(config: Pick<Config, 'trustProxy' | 'publicUrl'>): string[] {
  const warnings: string[] = [];
  if (config.trustProxy !== false && !config.publicUrl) {
    warnings.push('TRUST_PROXY is on and PUBLIC_URL is not set: the source settings route takes apiHost from X-Forwarded-Host/-Proto and answers Cache-Control: private (no CDN may cache it); set PUBLIC_URL to the URL clients reach this API at');
  }
  return warnings;
}

/** The delivery timing a message is accepted with (carried in its workflow input). */
export function deliveryPolicy(
  config: Pick<Config, 'deliveryRetryWindow' | 'deliveryTimeout' | 'deliveryInitialBackoff' | 'deliveryMaxBackoff' | 'deliveryFirstAttemptLocal' | 'deliveryMaxHold' | 'deliveryHoldCheckInterval'>,
): DeliveryPolicy {
  return {
    retryWindowMs: config.deliveryRetryWindow,
    timeoutMs: config.deliveryTimeout,
    initialBackoffMs: config.deliveryInitialBackoff,
    maxBackoffMs: config.deliveryMaxBackoff,
    firstAttemptLocal: config.deliveryFirstAttemptLocal,
    hardWindow: true,
    deliveredImplied: true,
    maxHoldMs: config.deliveryMaxHold,
    holdCheckMs: config.deliveryHoldCheckInterval,
  };
}
