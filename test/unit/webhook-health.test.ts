import {
  emptyHistogram,
  HealthAggregator,
  LATENCY_BOUNDS_MS,
  LATENCY_BUCKETS,
  latencyBucket,
  latencyPercentile,
  mergeBuckets,
  MINUTE_MS,
  SERIES_POINTS,
  summarizeUrlHealth,
  type HealthBucket,
} from '../../src/delivery/webhook-health';
import type { AttemptOutcome } from '../../src/delivery/types';

const ok: AttemptOutcome = { kind: 'success', status: 200 };
const http503: AttemptOutcome = { kind: 'retry', status: 503, reason: 'HTTP 503' };
const http400: AttemptOutcome = { kind: 'permanent', status: 400, reason: 'HTTP 400' };

/** A histogram with these counts at these bucket indexes. */
function histogram(counts: Record<number, number>): number[] {
  const h = emptyHistogram();
  for (const [i, n] of Object.entries(counts)) h[Number(i)] = n;
  return h;
}

describe('latencyBucket', () => {
  it.each([
    [0, 0],
    [2, 0],
    [3, 1],
    [5, 1],
    [99, 7],
    [100, 7],
    [101, 8],
    [30_000, LATENCY_BOUNDS_MS.length - 1],
    [30_001, LATENCY_BOUNDS_MS.length],
    [3_600_000, LATENCY_BOUNDS_MS.length],
  ])('%i ms falls in bucket %i (the first bound it does not exceed; beyond the last, the overflow)', (ms, bucket) => {
    expect(latencyBucket(ms)).toBe(bucket);
  });
});

describe('latencyPercentile', () => {
  it.each<[string, number[], number, number | undefined]>([
    ['no attempts: none', emptyHistogram(), 0.5, undefined],
    ['one attempt in (75, 100]: p50 is the bucket top', histogram({ 7: 1 }), 0.5, 100],
    ['one attempt in (75, 100]: p95 too', histogram({ 7: 1 }), 0.95, 100],
    ['4 attempts in (75, 100]: p50 is rank 2 of 4, halfway', histogram({ 7: 4 }), 0.5, 88],
    ['90 fast (≤2 ms) and 10 slow (1–1.5 s): p50 among the fast', histogram({ 0: 90, 13: 10 }), 0.5, 1],
    ['90 fast and 10 slow: p95 is rank 95, the 5th of 10 slow, halfway into (1000, 1500]', histogram({ 0: 90, 13: 10 }), 0.95, 1250],
    ['rank exactly at a bucket end stays in that bucket', histogram({ 2: 50, 9: 50 }), 0.5, 10],
    ['only the overflow bucket: its lower bound (30 s), never a made-up upper one', histogram({ [LATENCY_BOUNDS_MS.length]: 3 }), 0.95, 30_000],
    ['p at the smallest fraction is the first attempt', histogram({ 4: 1, 10: 1 }), 0.01, 35],
  ])('%s', (_name, h, p, expected) => {
    expect(latencyPercentile(h, p)).toBe(expected);
  });

  it('gives the same percentile for the merged histogram of two workers as for one worker seeing all attempts', () => {
    const all = new HealthAggregator();
    const [a, b] = [new HealthAggregator(), new HealthAggregator()];
    const at = 10 * MINUTE_MS;
    for (let i = 0; i < 200; i++) {
      const ms = (i * 37) % 1700;
      all.record('d', 'u', at, ok, ms);
      (i % 3 === 0 ? a : b).record('d', 'u', at, ok, ms);
    }
    const [whole] = all.drain();
    const merged = mergeBuckets(a.drain()[0], b.drain()[0]);
    expect(merged.latency).toEqual(whole.latency);
    expect(latencyPercentile(merged.latency, 0.95)).toBe(latencyPercentile(whole.latency, 0.95));
  });
});

describe('HealthAggregator', () => {
  it('adds attempts up per destination, URL and minute: outcome classes, latency buckets, the latest error', () => {
    const aggregator = new HealthAggregator();
    const t = 1_000 * MINUTE_MS;
    aggregator.record('d1', 'https://a/hook', t + 1_000, ok, 40);
    aggregator.record('d1', 'https://a/hook', t + 2_000, http503, 2_000);
    aggregator.record('d1', 'https://a/hook', t + 3_000, http400, 8);
    aggregator.record('d1', 'https://a/hook', t + MINUTE_MS, ok, 40);
    aggregator.record('d1', 'https://b/hook', t + 1_000, ok, 1);
    aggregator.record('d2', 'https://a/hook', t + 1_000, http503, 3);
    expect(aggregator.size).toBe(4);
    const buckets = aggregator.drain();
    expect(aggregator.size).toBe(0);
    expect(buckets.map((b) => [b.destinationId, b.url, b.minute])).toEqual([
      ['d1', 'https://a/hook', 1_000],
      ['d1', 'https://a/hook', 1_001],
      ['d1', 'https://b/hook', 1_000],
      ['d2', 'https://a/hook', 1_000],
    ]);
    expect(buckets[0]).toEqual({
      destinationId: 'd1',
      url: 'https://a/hook',
      minute: 1_000,
      successes: 1,
      retryFailures: 1,
      permanentFailures: 1,
      latency: histogram({ 5: 1, 14: 1, 2: 1 }),
      lastError: { reason: 'HTTP 400', atMs: t + 3_000 },
    });
    expect(buckets[1].lastError).toBeUndefined();
  });

  it('keeps the later error when attempts end out of order', () => {
    const aggregator = new HealthAggregator();
    aggregator.record('d', 'u', 5_000, http400, 1);
    aggregator.record('d', 'u', 4_000, http503, 1);
    expect(aggregator.drain()[0].lastError).toEqual({ reason: 'HTTP 400', atMs: 5_000 });
  });

  it('restore puts a failed flush back, added to what was recorded since', () => {
    const aggregator = new HealthAggregator();
    aggregator.record('d', 'u', 1_000, ok, 1);
    const failed = aggregator.drain();
    aggregator.record('d', 'u', 2_000, http503, 1);
    aggregator.restore(failed);
    const [bucket] = aggregator.drain();
    expect([bucket.successes, bucket.retryFailures, bucket.latency[0]]).toEqual([1, 1, 2]);
  });
});

describe('mergeBuckets', () => {
  const base: HealthBucket = { destinationId: 'd', url: 'u', minute: 7, successes: 2, retryFailures: 1, permanentFailures: 0, latency: histogram({ 1: 3 }) };
  it.each<[string, HealthBucket['lastError'], HealthBucket['lastError'], HealthBucket['lastError']]>([
    ['no error on either side: none', undefined, undefined, undefined],
    ['one side only: that one', { reason: 'x', atMs: 5 }, undefined, { reason: 'x', atMs: 5 }],
    ['the other side only: that one', undefined, { reason: 'y', atMs: 5 }, { reason: 'y', atMs: 5 }],
    ['both: the later', { reason: 'x', atMs: 9 }, { reason: 'y', atMs: 5 }, { reason: 'x', atMs: 9 }],
  ])('%s', (_name, a, b, expected) => {
    const merged = mergeBuckets({ ...base, ...(a && { lastError: a }) }, { ...base, ...(b && { lastError: b }) });
    expect(merged).toMatchObject({ successes: 4, retryFailures: 2, permanentFailures: 0, latency: histogram({ 1: 6 }) });
    expect(merged.lastError).toEqual(expected);
  });
});

describe('summarizeUrlHealth', () => {
  // 2026-11-24 12:07:30 UTC: the current quarter hour starts at 12:00.
  const now = Date.UTC(2026, 10, 24, 12, 7, 30);
  const nowMinute = Math.floor(now / MINUTE_MS);
  const bucket = (minutesAgo: number, fields: Partial<HealthBucket>): HealthBucket => ({
    destinationId: 'd',
    url: 'u',
    minute: nowMinute - minutesAgo,
    successes: 0,
    retryFailures: 0,
    permanentFailures: 0,
    latency: emptyHistogram(),
    ...fields,
  });

  it('shows nothing without attempts: zero counts, null rate and percentiles, 96 empty steps', () => {
    const health = summarizeUrlHealth([], now);
    expect(health.lastHour).toEqual({ attempts: 0, successes: 0, failures: { retry: 0, permanent: 0 }, successRate: null, p50Ms: null, p95Ms: null, waited: { throttledMs: 0, heldMs: 0, backpressuredMs: 0 } });
    expect(health.lastError).toBeUndefined();
    expect(health.series).toHaveLength(SERIES_POINTS);
    expect(health.series[SERIES_POINTS - 1]).toEqual({ start: '2026-11-24T12:00:00.000Z', attempts: 0, successes: 0, failures: 0, p50Ms: null, p95Ms: null });
    expect(health.series[0].start).toBe('2026-11-23T12:15:00.000Z');
  });

  it('counts the last hour and the last day apart, ignores older buckets, and puts each minute in its quarter hour', () => {
    const health = summarizeUrlHealth(
      [
        bucket(0, { successes: 3, latency: histogram({ 3: 3 }) }),
        bucket(59, { retryFailures: 1, latency: histogram({ 12: 1 }), lastError: { reason: 'HTTP 503', atMs: now - 59 * MINUTE_MS } }),
        bucket(60, { permanentFailures: 2, latency: histogram({ 1: 2 }), lastError: { reason: 'HTTP 404', atMs: now - 60 * MINUTE_MS } }),
        bucket(1_439, { successes: 1, latency: histogram({ 3: 1 }) }),
        bucket(1_440, { successes: 100, latency: histogram({ 3: 100 }) }),
      ],
      now,
    );
    expect(health.lastHour).toEqual({ attempts: 4, successes: 3, failures: { retry: 1, permanent: 0 }, successRate: 0.75, p50Ms: 17, p95Ms: 1000, waited: { throttledMs: 0, heldMs: 0, backpressuredMs: 0 } });
    expect(health.lastDay).toMatchObject({ attempts: 7, successes: 4, failures: { retry: 1, permanent: 2 } });
    expect(health.lastError).toEqual({ reason: 'HTTP 503', at: '2026-11-24T11:08:30.000Z' });
    const last = health.series[SERIES_POINTS - 1];
    expect(last).toMatchObject({ start: '2026-11-24T12:00:00.000Z', attempts: 3, successes: 3, failures: 0, p50Ms: 17, p95Ms: 20 });
    // 11:08 (59 minutes ago) and 11:07 (60 ago) share the 11:00 quarter hour.
    expect(health.series.find((p) => p.start === '2026-11-24T11:00:00.000Z')).toMatchObject({ attempts: 3, successes: 0, failures: 3 });
    // 1,439 minutes ago (12:08 yesterday) is before the first step (12:15): in the day, not in the chart.
    expect(health.series.reduce((sum, p) => sum + p.attempts, 0)).toBe(6);
  });
});

it('LATENCY_BUCKETS is one more than the bounds (the overflow)', () => {
  expect(LATENCY_BUCKETS).toBe(LATENCY_BOUNDS_MS.length + 1);
});

describe('time waited without sending', () => {
  const at = Date.UTC(2026, 10, 24, 11, 8, 30);
  it('adds each hold to its reason in the minute it ended, beside the attempts, and sums them in the summary', () => {
    const aggregator = new HealthAggregator();
    aggregator.recordHold('dst_1', 'https://a.example/hook', at, 'throttled', 200);
    aggregator.recordHold('dst_1', 'https://a.example/hook', at + 1_000, 'throttled', 400.4);
    aggregator.recordHold('dst_1', 'https://a.example/hook', at, 'paused', 5_000);
    aggregator.recordHold('dst_1', 'https://a.example/hook', at, 'backpressure', 3_000);
    aggregator.record('dst_1', 'https://a.example/hook', at, { kind: 'success', status: 200 }, 12);
    const [bucket] = aggregator.drain();
    expect(bucket).toMatchObject({ successes: 1, throttledMs: 600, heldMs: 5_000, backpressuredMs: 3_000 });
    const merged = mergeBuckets(bucket, { ...bucket, throttledMs: 100, heldMs: undefined, backpressuredMs: undefined });
    expect(merged).toMatchObject({ throttledMs: 700, heldMs: 5_000, backpressuredMs: 3_000 });
    expect(summarizeUrlHealth([merged], at).lastHour.waited).toEqual({ throttledMs: 700, heldMs: 5_000, backpressuredMs: 3_000 });
  });

  it('leaves a bucket without holds as it was: no hold fields, zeros in the summary', () => {
    const aggregator = new HealthAggregator();
    aggregator.record('dst_1', 'https://a.example/hook', at, { kind: 'retry', status: 503, reason: 'HTTP 503' }, 40);
    const [bucket] = aggregator.drain();
    expect(Object.keys(bucket)).not.toEqual(expect.arrayContaining(['throttledMs']));
    expect(summarizeUrlHealth([bucket], at).lastDay.waited).toEqual({ throttledMs: 0, heldMs: 0, backpressuredMs: 0 });
  });
});
