import path from 'node:path';
import { parseDuration } from './delivery/duration';
import { parseCron } from './personas/cron';
import { parseAllowlist } from './delivery/egress';
import type { DeliveryPolicy } from './delivery/types';

/**
 * Every setting Switchyard reads, with its default: the one home of configuration.
 * The README's configuration table mirrors this list (a test keeps them in step).
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
const boolean = (raw: string) => {
  if (raw !== 'true' && raw !== 'false') throw new Error(`"${raw}" is not true or false`);
  return raw === 'true';
};
const list = (raw: string) => raw.split(',').map((s) => s.trim()).filter(Boolean);
const cidrs = (raw: string) => {
  const entries = list(raw);
  parseAllowlist(entries);
  return entries;
};

export const SETTINGS = {
  port: { env: 'PORT', default: '8080', description: 'Port of the HTTP API (ingestion, admin, health).', parse: integer },
  host: { env: 'HOST', default: '0.0.0.0', description: 'Address the HTTP API listens on.', parse: text },
  dataDir: { env: 'DATA_DIR', default: './data', description: 'Folder for the SQLite settings store and the embedded Temporal dev server database.', parse: text },
  databasePath: { env: 'DATABASE_PATH', default: '', description: 'SQLite file for sources, destinations and regulations (default `$DATA_DIR/switchyard.db`).', parse: text },
  adminToken: { env: 'ADMIN_TOKEN', default: '', description: 'Bearer token for the admin API. `npm start` generates and prints one when unset; `server.ts` refuses to start without it.', parse: text },
  logLevel: { env: 'LOG_LEVEL', default: 'info', description: 'pino log level (trace, debug, info, warn, error, silent).', parse: text },
  temporalAddress: { env: 'TEMPORAL_ADDRESS', default: '127.0.0.1:7233', description: 'Temporal frontend gRPC address.', parse: text },
  temporalNamespace: { env: 'TEMPORAL_NAMESPACE', default: 'default', description: 'Temporal namespace for delivery workflows.', parse: text },
  temporalTaskQueue: { env: 'TEMPORAL_TASK_QUEUE', default: 'switchyard-delivery', description: 'Task queue the API starts workflows on and the worker polls.', parse: text },
  temporalUiPort: { env: 'TEMPORAL_UI_PORT', default: '8233', description: 'Web UI port of the embedded dev server started by `npm start`.', parse: integer },
  embeddedTemporal: { env: 'EMBEDDED_TEMPORAL', default: 'true', description: '`npm start` starts a Temporal dev server (SQLite under `$DATA_DIR`) unless this is `false`.', parse: (raw: string) => raw !== 'false' },
  deliveryRetryWindow: { env: 'DELIVERY_RETRY_WINDOW', default: '4h', description: 'Hard deadline, from the first attempt, for retrying a message (seed: 4 hours).', parse: duration },
  deliveryTimeout: { env: 'DELIVERY_TIMEOUT', default: '5s', description: 'Time a webhook has to answer one attempt (seed: 5 seconds).', parse: duration },
  deliveryInitialBackoff: { env: 'DELIVERY_INITIAL_BACKOFF', default: '1s', description: 'Wait before the second round of attempts; doubles each round, with jitter.', parse: duration },
  deliveryMaxBackoff: { env: 'DELIVERY_MAX_BACKOFF', default: '10m', description: 'Longest wait between two rounds of attempts (a `Retry-After` may ask for more, up to the window).', parse: duration },
  deliveryFirstAttemptLocal: { env: 'DELIVERY_FIRST_ATTEMPT_LOCAL', default: 'true', description: 'Run the first attempt of a message to each destination as a Temporal local activity inside the workflow task (about half the Temporal server work per delivered message; later attempts are regular activities). `false` makes every attempt a regular activity.', parse: boolean },
  personasSyncSchedule: { env: 'PERSONAS_SYNC_SCHEDULE', default: '*/15 * * * *', description: 'Cron expression (UTC) of the Temporal Schedule of an audience or computed trait created without a `schedule`.', parse: parseCron },
  personasSyncPageSize: { env: 'PERSONAS_SYNC_PAGE_SIZE', default: '500', description: 'Changed profiles one Personas sync activity reads and starts identify deliveries for (the worker\'s setting).', parse: (raw: string) => between(integer(raw), 1, 10_000) },
  personasDeliveryTaskQueue: { env: 'PERSONAS_DELIVERY_TASK_QUEUE', default: '', description: 'Task queue of the identify deliveries Personas syncs start (default `$TEMPORAL_TASK_QUEUE-personas`). The worker polls it beside `TEMPORAL_TASK_QUEUE` with its own slots, so a large sync never delays the delivery of ingested calls nor waits behind its own deliveries.', parse: text },
  workerMaxConcurrentActivities: { env: 'WORKER_MAX_CONCURRENT_ACTIVITIES', default: '200', description: 'Webhook POSTs one worker runs at once (first attempts, run as local activities, get as many slots again).', parse: integer },
  workerMaxConcurrentWorkflowTasks: { env: 'WORKER_MAX_CONCURRENT_WORKFLOW_TASKS', default: '100', description: 'Workflow tasks one worker runs at once.', parse: integer },
  egressAllowlist: { env: 'EGRESS_ALLOWLIST', default: '', description: 'Comma-separated CIDRs that webhooks may reach although they are not public addresses (e.g. `127.0.0.0/8` for local receivers). Every other loopback, private, link-local (incl. 169.254.169.254), CGNAT, unique-local, IPv4-mapped or otherwise non-global address is refused at connection time.', parse: cidrs },
  signingSecretOverlap: { env: 'SIGNING_SECRET_OVERLAP', default: '24h', description: 'After a destination\'s Standard Webhooks `signingSecret` is replaced, how long the previous secret keeps signing too (receivers may verify with either). A PATCH may set its own `signingSecretOverlap`.', parse: duration },
  ingestStartConcurrency: { env: 'INGEST_START_CONCURRENCY', default: '32', description: 'Workflow starts one ingestion request keeps in flight at once (a `/v1/batch` of 100 messages is 100 starts; Temporal has no batch start).', parse: positiveInteger },
  ingestEagerStart: { env: 'INGEST_EAGER_START', default: 'true', description: 'When the API and worker run in one process (`npm start`), ask Temporal to hand each new delivery workflow\'s first task straight back to this process\'s worker in the start reply (eager workflow start) instead of through the task queue. No effect when the API runs alone (`src/server.ts`).', parse: boolean },
  ingestRateLimit: { env: 'INGEST_RATE_LIMIT', default: '500', description: 'Ingestion requests one write key may make per `INGEST_RATE_WINDOW`, per API process; beyond it the API answers 429 with Retry-After. `0` switches the limit off.', parse: integer },
  ingestRateWindow: { env: 'INGEST_RATE_WINDOW', default: '1s', description: 'The window `INGEST_RATE_LIMIT` counts over.', parse: duration },
  workerMaxInFlightPerWebhook: { env: 'WORKER_MAX_IN_FLIGHT_PER_WEBHOOK', default: '20', description: 'Attempts to one webhook URL of one destination a worker runs at once; more come back at once as retryable ("webhook busy") so a hanging or slow receiver holds at most this many of the worker\'s activity slots. `0` means no cap.', parse: integer },
  httpHeadersTimeout: { env: 'HTTP_HEADERS_TIMEOUT', default: '10s', description: 'Time a client has to send a request\'s headers (slowloris defence); past it the API answers 408 and closes the connection.', parse: duration },
  httpRequestTimeout: { env: 'HTTP_REQUEST_TIMEOUT', default: '30s', description: 'Time a client has to send a whole request, body included (at least `HTTP_HEADERS_TIMEOUT`); past it the API answers 408. `0` switches it off.', parse: duration },
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

/** The delivery timing a message is accepted with (carried in its workflow input). */
export function deliveryPolicy(config: Pick<Config, 'deliveryRetryWindow' | 'deliveryTimeout' | 'deliveryInitialBackoff' | 'deliveryMaxBackoff' | 'deliveryFirstAttemptLocal'>): DeliveryPolicy {
  return {
    retryWindowMs: config.deliveryRetryWindow,
    timeoutMs: config.deliveryTimeout,
    initialBackoffMs: config.deliveryInitialBackoff,
    maxBackoffMs: config.deliveryMaxBackoff,
    firstAttemptLocal: config.deliveryFirstAttemptLocal,
  };
}
