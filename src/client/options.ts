import type { Dispatcher } from 'undici';
import type { Logger } from './logger';

/** What `new Analytics(options)` accepts. Durations are milliseconds. */
export interface AnalyticsOptions {
  /** The source's write key; sent as the HTTP Basic username. */
  writeKey: string;
  /** Base URL of the Switchyard API, e.g. `https://switchyard.example.com`; batches go to `{endpoint}/v1/batch`. */
  endpoint: string;
  /** Flush when this many messages are queued; also the most messages one request carries. 1 sends every call at once. */
  flushAt?: number;
  /** Flush when this long has passed since the last flush (or since the first message queued after it). */
  flushAfter?: number;
  /** Longest one HTTP attempt may take, connection to last byte, before it counts as failed (and is retried). */
  timeout?: number;
  /** Retries after the first attempt for network errors, timeouts, 408, 429 and 5xx. 0 disables retries. */
  maxRetries?: number;
  /** Exponential backoff between attempts: the first wait is about `initial`, doubling up to `max`, with jitter. */
  backoff?: { initial?: number; max?: number };
  /** Most messages held at once (queued, in flight or waiting to retry). Past it new calls are refused with `queue_full`. */
  maxQueueSize?: number;
  /** Where log lines go (default: stderr). Debug lines are produced only when `DEBUG` includes `analytics`. */
  logger?: Logger;
  /** undici dispatcher for proxies or a private CA. Default: a keep-alive Agent the client owns and closes on `close()`. */
  dispatcher?: Dispatcher;
}

/** Every default in one place; docs/client.md lists the same table. */
export const DEFAULTS = {
  /** Seed: `FlushAt`/`Size` 20. */
  flushAt: 20,
  /** Seed: `FlushAfter` 5 seconds since the last flush. */
  flushAfter: 5_000,
  /** The ingestion API answers once Temporal holds a workflow per message; 10 s leaves room for a 500 KB batch. */
  timeout: 10_000,
  /** With the default backoff, 10 retries span about 40 s before a batch is reported failed (as the Go library did). */
  maxRetries: 10,
  backoff: { initial: 100, max: 10_000 },
  /** About 10 MB at 1 KB per message; 320 MB only if every message is at the 32 KB limit. */
  maxQueueSize: 10_000,
} as const;

export interface ResolvedOptions {
  writeKey: string;
  batchUrl: string;
  flushAt: number;
  flushAfter: number;
  timeout: number;
  maxRetries: number;
  backoff: { initial: number; max: number };
  maxQueueSize: number;
}

function check(name: string, value: unknown, rule: string, ok: boolean): void {
  if (!ok) throw new TypeError(`Analytics option ${name}: ${rule}, got ${JSON.stringify(value) ?? String(value)}`);
}

const isInteger = (value: unknown, min: number): value is number => Number.isInteger(value) && (value as number) >= min;
const isDuration = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value) && value > 0;

/** Fills defaults and refuses nonsense at construction, naming the option and its rule. */
export function resolveOptions(options: AnalyticsOptions): ResolvedOptions {
  if (options === null || typeof options !== 'object') throw new TypeError('Analytics options: expected an object with writeKey and endpoint');
  const { writeKey, endpoint } = options;
  check('writeKey', writeKey, 'must be a non-empty string', typeof writeKey === 'string' && writeKey.length > 0);
  let url: URL | undefined;
  try {
    url = new URL(endpoint);
  } catch {
    url = undefined;
  }
  check('endpoint', endpoint, 'must be an http or https URL without query or fragment, such as https://switchyard.example.com', url !== undefined && (url.protocol === 'http:' || url.protocol === 'https:') && !url.search && !url.hash);

  const flushAt = options.flushAt ?? DEFAULTS.flushAt;
  const flushAfter = options.flushAfter ?? DEFAULTS.flushAfter;
  const timeout = options.timeout ?? DEFAULTS.timeout;
  const maxRetries = options.maxRetries ?? DEFAULTS.maxRetries;
  const backoff = { initial: options.backoff?.initial ?? DEFAULTS.backoff.initial, max: options.backoff?.max ?? DEFAULTS.backoff.max };
  const maxQueueSize = options.maxQueueSize ?? DEFAULTS.maxQueueSize;
  check('flushAt', flushAt, 'must be an integer of at least 1', isInteger(flushAt, 1));
  check('flushAfter', flushAfter, 'must be a positive number of milliseconds', isDuration(flushAfter));
  check('timeout', timeout, 'must be a positive number of milliseconds', isDuration(timeout));
  check('maxRetries', maxRetries, 'must be an integer of at least 0', isInteger(maxRetries, 0));
  check('backoff.initial', backoff.initial, 'must be a positive number of milliseconds', isDuration(backoff.initial));
  check('backoff.max', backoff.max, 'must be a number of milliseconds no smaller than backoff.initial', isDuration(backoff.max) && backoff.max >= backoff.initial);
  check('maxQueueSize', maxQueueSize, `must be an integer of at least flushAt (${flushAt}), or no batch would ever fill`, isInteger(maxQueueSize, flushAt));

  // `{endpoint}/v1/batch`, keeping any path prefix a reverse proxy adds.
  const base = url!.href.replace(/\/+$/, '');
  return { writeKey, batchUrl: `${base}/v1/batch`, flushAt, flushAfter, timeout, maxRetries, backoff, maxQueueSize };
}
