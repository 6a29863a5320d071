import type { AttemptOutcome, HoldReason } from './types';

/**
 * Webhook health: what each attempt leaves behind for `GET /admin/destinations/:id/health`,
 * and how it is read back. Pure: the worker's recorder (activities/health-recorder.ts) aggregates
 * attempts into minute buckets with these functions, the store adds the buckets of every worker up,
 * and the admin route summarises them, all without a clock of their own.
 */

/**
 * Upper bounds (ms) of the latency histogram's buckets; one more bucket holds everything slower.
 * Fixed, so histograms add up across workers and minutes (a percentile of percentiles would not).
 * Each bound is one column of `webhook_health` (migration 0007): never change one, add a migration.
 */
export const LATENCY_BOUNDS_MS = [2, 5, 10, 20, 35, 50, 75, 100, 150, 250, 400, 600, 1000, 1500, 2500, 4000, 6000, 10000, 20000, 30000] as const;
/** Buckets in a histogram: one per bound, and the overflow. */
export const LATENCY_BUCKETS = LATENCY_BOUNDS_MS.length + 1;

export type AttemptKind = AttemptOutcome['kind'];

/** One webhook URL's attempts in one minute, as one worker saw them or as the store adds them up. */
export interface HealthBucket {
  destinationId: string;
  url: string;
  /** Minutes since the epoch (UTC): the minute the attempts ended in. */
  minute: number;
  successes: number;
  /** Failures that can succeed later: 5xx, 408, 429, timeouts, connection errors (outcome.ts `retry`). */
  retryFailures: number;
  /** Failures that will not: other 4xx, 3xx, refused certificates or addresses, 410 (outcome.ts `permanent`). */
  permanentFailures: number;
  /** Attempt counts per latency bucket (LATENCY_BUCKETS entries). */
  latency: number[];
  /** The minute's latest failure reason and when (ms since the epoch), if it had one. */
  lastError?: { reason: string; atMs: number };
  /** Time messages waited to this URL without sending, summed (ms); absent is 0. */
  throttledMs?: number;
  heldMs?: number;
  backpressuredMs?: number;
}

/** The bucket field a hold's time adds to. */
export const HOLD_FIELD = { throttled: 'throttledMs', paused: 'heldMs', backpressure: 'backpressuredMs' } as const satisfies Record<HoldReason, keyof HealthBucket>;
const HOLD_FIELDS = Object.values(HOLD_FIELD);

export const MINUTE_MS = 60_000;
export const minuteOf = (ms: number) => Math.floor(ms / MINUTE_MS);

/** Index of the histogram bucket a latency falls in: the first bound it does not exceed. */
export function latencyBucket(durationMs: number): number {
  for (let i = 0; i < LATENCY_BOUNDS_MS.length; i++) if (durationMs <= LATENCY_BOUNDS_MS[i]) return i;
  return LATENCY_BOUNDS_MS.length;
}

export const emptyHistogram = (): number[] => new Array<number>(LATENCY_BUCKETS).fill(0);

/** Adds `from` into `into` (same length), returning `into`. */
export function addHistogram(into: number[], from: readonly number[]): number[] {
  for (let i = 0; i < into.length; i++) into[i] += from[i] ?? 0;
  return into;
}

/**
 * The latency at or under which a fraction `p` (0..1] of the attempts fell, estimated from the
 * histogram: the bucket holding the attempt of rank ceil(p × n), interpolated linearly between that
 * bucket's bounds (attempts spread evenly inside it). The overflow bucket has no upper bound: its
 * lower bound is the answer. Undefined without attempts.
 */
export function latencyPercentile(histogram: readonly number[], p: number): number | undefined {
  const total = histogram.reduce((sum, n) => sum + n, 0);
  if (total === 0) return undefined;
  const rank = Math.max(1, Math.ceil(p * total));
  let below = 0;
  for (let i = 0; i < histogram.length; i++) {
    const count = histogram[i];
    if (count > 0 && below + count >= rank) {
      const lower = i === 0 ? 0 : LATENCY_BOUNDS_MS[i - 1];
      if (i >= LATENCY_BOUNDS_MS.length) return lower;
      const upper = LATENCY_BOUNDS_MS[i];
      return Math.round(lower + ((upper - lower) * (rank - below)) / count);
    }
    below += count;
  }
  return undefined;
}

const bucketKey = (destinationId: string, url: string, minute: number) => `${destinationId}\n${url}\n${minute}`;

/**
 * One worker's attempts since its last flush, per destination, URL and minute. `record` is on every
 * attempt's path, so it is a map lookup and a few additions; `drain` hands the buckets over and
 * starts again empty.
 */
export class HealthAggregator {
  private buckets = new Map<string, HealthBucket>();

  private bucket(destinationId: string, url: string, atMs: number): HealthBucket {
    const minute = minuteOf(atMs);
    const key = bucketKey(destinationId, url, minute);
    let bucket = this.buckets.get(key);
    if (!bucket) {
      bucket = { destinationId, url, minute, successes: 0, retryFailures: 0, permanentFailures: 0, latency: emptyHistogram() };
      this.buckets.set(key, bucket);
    }
    return bucket;
  }

  /** A wait a message sat out without sending, in the minute it ended. */
  recordHold(destinationId: string, url: string, endedAtMs: number, reason: HoldReason, ms: number): void {
    const bucket = this.bucket(destinationId, url, endedAtMs);
    bucket[HOLD_FIELD[reason]] = (bucket[HOLD_FIELD[reason]] ?? 0) + Math.max(0, Math.round(ms));
  }

  record(destinationId: string, url: string, endedAtMs: number, outcome: AttemptOutcome, durationMs: number): void {
    const bucket = this.bucket(destinationId, url, endedAtMs);
    if (outcome.kind === 'success') bucket.successes++;
    else {
      if (outcome.kind === 'retry') bucket.retryFailures++;
      else bucket.permanentFailures++;
      if (!bucket.lastError || endedAtMs >= bucket.lastError.atMs) bucket.lastError = { reason: outcome.reason, atMs: endedAtMs };
    }
    bucket.latency[latencyBucket(durationMs)]++;
  }

  /** Buckets recorded but not yet handed over. */
  get size(): number {
    return this.buckets.size;
  }

  /** The buckets so far, in key order (so concurrent upserts of several workers lock rows in one order); empties the aggregator. */
  drain(): HealthBucket[] {
    const drained = [...this.buckets.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, bucket]) => bucket);
    this.buckets = new Map();
    return drained;
  }

  /** Puts buckets back (a flush that failed), adding to whatever was recorded since. */
  restore(buckets: HealthBucket[]): void {
    for (const bucket of buckets) {
      const key = bucketKey(bucket.destinationId, bucket.url, bucket.minute);
      const current = this.buckets.get(key);
      this.buckets.set(key, current ? mergeBuckets(current, bucket) : bucket);
    }
  }
}

/** Two buckets of the same URL and minute added up: what the store's upsert does in SQL. */
export function mergeBuckets(a: HealthBucket, b: HealthBucket): HealthBucket {
  const lastError = !a.lastError ? b.lastError : !b.lastError ? a.lastError : b.lastError.atMs >= a.lastError.atMs ? b.lastError : a.lastError;
  return {
    destinationId: a.destinationId,
    url: a.url,
    minute: a.minute,
    successes: a.successes + b.successes,
    retryFailures: a.retryFailures + b.retryFailures,
    permanentFailures: a.permanentFailures + b.permanentFailures,
    latency: addHistogram([...a.latency], b.latency),
    ...(lastError && { lastError }),
    ...waitedSum([a, b]),
  };
}

/** The hold times of some buckets added up; fields that are 0 throughout stay absent. */
function waitedSum(buckets: HealthBucket[]): Pick<HealthBucket, (typeof HOLD_FIELDS)[number]> {
  const sum: Pick<HealthBucket, (typeof HOLD_FIELDS)[number]> = {};
  for (const field of HOLD_FIELDS) {
    const total = buckets.reduce((n, b) => n + (b[field] ?? 0), 0);
    if (total > 0) sum[field] = total;
  }
  return sum;
}

/** Attempts over a span of time, as the health route shows them. */
export interface HealthTotals {
  attempts: number;
  successes: number;
  failures: { retry: number; permanent: number };
  /** successes / attempts; null without attempts. */
  successRate: number | null;
  /** Estimated from the histogram (latencyPercentile); null without attempts. */
  p50Ms: number | null;
  p95Ms: number | null;
  /** Time messages waited without sending (ms, summed over messages). */
  waited: { throttledMs: number; heldMs: number; backpressuredMs: number };
}

/** One point of the chart series: the attempts that ended in [start, start + step). */
export interface HealthPoint {
  start: string;
  attempts: number;
  successes: number;
  failures: number;
  p50Ms: number | null;
  p95Ms: number | null;
}

export interface UrlHealth {
  lastHour: HealthTotals;
  lastDay: HealthTotals;
  lastError?: { reason: string; at: string };
  series: HealthPoint[];
}

function totalsOf(buckets: HealthBucket[]): HealthTotals {
  let successes = 0;
  let retry = 0;
  let permanent = 0;
  const histogram = emptyHistogram();
  for (const bucket of buckets) {
    successes += bucket.successes;
    retry += bucket.retryFailures;
    permanent += bucket.permanentFailures;
    addHistogram(histogram, bucket.latency);
  }
  const attempts = successes + retry + permanent;
  return {
    attempts,
    successes,
    failures: { retry, permanent },
    successRate: attempts === 0 ? null : successes / attempts,
    p50Ms: latencyPercentile(histogram, 0.5) ?? null,
    p95Ms: latencyPercentile(histogram, 0.95) ?? null,
    waited: { throttledMs: 0, heldMs: 0, backpressuredMs: 0, ...waitedSum(buckets) },
  };
}

export const HOUR_MINUTES = 60;
export const DAY_MINUTES = 24 * 60;
/** The chart's step: 96 points over the last day. */
export const SERIES_STEP_MINUTES = 15;
export const SERIES_POINTS = DAY_MINUTES / SERIES_STEP_MINUTES;

/** The first minute a health summary at `nowMs` reads (the series' first step starts no earlier than the day). */
export const healthSinceMinute = (nowMs: number) => minuteOf(nowMs) - DAY_MINUTES + 1;

/**
 * One URL's health at `nowMs` from its minute buckets (any order; those outside the last day are
 * ignored). The last hour and day end with the current minute, partial; the series has
 * SERIES_POINTS steps aligned to the clock, the last one the current, partial, quarter hour.
 */
export function summarizeUrlHealth(buckets: HealthBucket[], nowMs: number): UrlHealth {
  const now = minuteOf(nowMs);
  const inLast = (minutes: number) => buckets.filter((b) => b.minute > now - minutes && b.minute <= now);
  const day = inLast(DAY_MINUTES);
  const lastStep = Math.floor(now / SERIES_STEP_MINUTES) * SERIES_STEP_MINUTES;
  const firstStep = lastStep - (SERIES_POINTS - 1) * SERIES_STEP_MINUTES;
  const steps: HealthBucket[][] = Array.from({ length: SERIES_POINTS }, () => []);
  for (const bucket of day) {
    const index = Math.floor((bucket.minute - firstStep) / SERIES_STEP_MINUTES);
    if (index >= 0 && index < SERIES_POINTS) steps[index].push(bucket);
  }
  let lastError: HealthBucket['lastError'];
  for (const bucket of day) if (bucket.lastError && (!lastError || bucket.lastError.atMs > lastError.atMs)) lastError = bucket.lastError;
  return {
    lastHour: totalsOf(inLast(HOUR_MINUTES)),
    lastDay: totalsOf(day),
    ...(lastError && { lastError: { reason: lastError.reason, at: new Date(lastError.atMs).toISOString() } }),
    series: steps.map((step, i) => {
      const totals = totalsOf(step);
      return {
        start: new Date((firstStep + i * SERIES_STEP_MINUTES) * MINUTE_MS).toISOString(),
        attempts: totals.attempts,
        successes: totals.successes,
        failures: totals.failures.retry + totals.failures.permanent,
        p50Ms: totals.p50Ms,
        p95Ms: totals.p95Ms,
      };
    }),
  };
}
