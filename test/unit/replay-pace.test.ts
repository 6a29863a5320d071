import { LiveLag } from '../../src/activities/live-lag';
import { BASELINE_MS, FIRST_PER_SECOND, firstPace, LAG_WINDOW_MS, lagCeilingMs, MAX_PER_SECOND, MIN_PER_SECOND, nextPace, pageSizeAt, REST_EVERY_MS, restDue, spacingMs, type LiveLagReading, type ReplayPace } from '../../src/delivery/replay-pace';

/** Live traffic first: a replay's pace from the live lag its worker sees. */
const T = 1_000_000_000_000;
const window = (p90Ms: number, samples = 100, startMs = T, replaySends = 0) => ({ startMs, samples, p90Ms, replaySends });
const pace = (perSecond: number, judgedWindowMs?: number): ReplayPace => ({ perSecond, restedAtMs: T, ...(judgedWindowMs !== undefined && { judgedWindowMs }) });

describe('a replay paced by live lag', () => {
  it.each<[string, ReplayPace, LiveLagReading, number | 'auto', number]>([
    ['no live traffic at all: twice as fast', pace(10), {}, 'auto', 20],
    ['a window with too few live sends to judge: twice as fast', pace(10), { latest: window(500, 4), baselineMs: 20 }, 'auto', 20],
    ['live lag within 25 % of the baseline: one more a second', pace(10), { latest: window(25), baselineMs: 20 }, 'auto', 11],
    ['live lag over 25 % above the baseline: halved', pace(10), { latest: window(26), baselineMs: 20 }, 'auto', 5],
    ['a tiny baseline allows 5 ms of jitter', pace(10), { latest: window(9), baselineMs: 4 }, 'auto', 11],
    ['beyond the jitter: halved', pace(10), { latest: window(10), baselineMs: 4 }, 'auto', 5],
    ['an operator limit replaces the baseline (under it)', pace(10), { latest: window(199), baselineMs: 20 }, 200, 11],
    ['an operator limit replaces the baseline (over it)', pace(10), { latest: window(201), baselineMs: 20 }, 200, 5],
    ['never below the floor', pace(MIN_PER_SECOND), { latest: window(1_000), baselineMs: 20 }, 'auto', MIN_PER_SECOND],
    ['never above the ceiling', pace(MAX_PER_SECOND), {}, 'auto', MAX_PER_SECOND],
  ])('%s', (_, from, reading, limit, perSecond) => {
    expect(nextPace(from, reading, limit).perSecond).toBe(perSecond);
  });

  it('judges each closed window once: the next page in the same window keeps the pace', () => {
    const reading = { latest: window(100), baselineMs: 20 };
    const once = nextPace(pace(10), reading, 'auto');
    expect(once).toEqual({ perSecond: 5, judgedWindowMs: T, restedAtMs: T });
    expect(nextPace(once, reading, 'auto')).toBe(once);
    expect(nextPace(once, { ...reading, latest: window(100, 100, T + LAG_WINDOW_MS) }, 'auto').perSecond).toBe(2.5);
  });

  it('has no ceiling to judge by before any window had live traffic', () => {
    expect(lagCeilingMs({}, 'auto')).toBeUndefined();
    expect(lagCeilingMs({}, 150)).toBe(150);
    expect(lagCeilingMs({ baselineMs: 100 }, 'auto')).toBe(125);
  });

  it('starts slow, and rests at once to measure when there is no baseline yet', () => {
    expect(firstPace({ baselineMs: 30 }, T)).toEqual({ perSecond: FIRST_PER_SECOND, restedAtMs: T });
    const live = { latest: window(40) };
    expect(restDue(firstPace({ baselineMs: 30, ...live }, T), live, T, 'auto')).toBe(false);
    expect(restDue(firstPace(live, T), live, T, 'auto')).toBe(true);
  });

  it('rests every REST_EVERY_MS while there is live traffic to measure, never with none, nor under an operator limit', () => {
    const live = { latest: window(40) };
    expect(restDue(pace(10), live, T + REST_EVERY_MS - 1, 'auto')).toBe(false);
    expect(restDue(pace(10), live, T + REST_EVERY_MS, 'auto')).toBe(true);
    expect(restDue(pace(10), { latest: window(40, 2) }, T + REST_EVERY_MS, 'auto')).toBe(false);
    expect(restDue(pace(10), {}, T + REST_EVERY_MS, 'auto')).toBe(false);
    expect(restDue(pace(10), live, T + REST_EVERY_MS, 200)).toBe(false);
  });

  it.each([
    [1, 50, 1, 1_000],
    [10, 50, 10, 100],
    [100, 50, 50, 10],
    [10, 3, 3, 100],
    [0.2, 50, 1, 5_000],
  ])('at %s/s with room for %s: pages of %s, %s ms apart', (perSecond, room, size, gap) => {
    expect(pageSizeAt(pace(perSecond), room)).toBe(size);
    expect(spacingMs(pace(perSecond))).toBe(gap);
  });
});

describe("a worker's live lag", () => {
  const record = (lag: LiveLag, atMs: number, lags: number[]) => lags.forEach((l) => lag.record(l, atMs));

  it('reads the last closed window: its sample count and 90th percentile', () => {
    const lag = new LiveLag();
    record(lag, T + 1, Array.from({ length: 100 }, (_, i) => i + 1));
    // Still open: nothing closed yet, and no baseline.
    expect(lag.reading(T + 2)).toEqual({ latest: window(0, 0, T - LAG_WINDOW_MS) });
    expect(lag.reading(T + LAG_WINDOW_MS)).toEqual({ latest: window(91), baselineMs: 91 });
  });

  it('reads an empty window when no live message went out in the last one', () => {
    const lag = new LiveLag();
    record(lag, T, [10, 10, 10, 10, 10]);
    expect(lag.reading(T + 2 * LAG_WINDOW_MS).latest).toEqual(window(0, 0, T + LAG_WINDOW_MS));
  });

  it('takes as baseline the median p90 of the last ten minutes, from windows with enough live sends and no replayed request', () => {
    const lag = new LiveLag();
    const at = (n: number) => T + n * LAG_WINDOW_MS;
    record(lag, at(0), Array(10).fill(30));
    record(lag, at(1), Array(10).fill(80));
    record(lag, at(2), [5, 5]); // too few to count
    record(lag, at(3), Array(10).fill(60));
    record(lag, at(4), Array(10).fill(500));
    lag.replaySent(at(4)); // a replay beside it: not unhurried
    expect(lag.reading(at(5))).toEqual({ latest: window(500, 10, at(4), 1), baselineMs: 60 });
    // Ten minutes on, the first windows are forgotten.
    record(lag, T + BASELINE_MS + LAG_WINDOW_MS, Array(10).fill(70));
    expect(lag.reading(T + BASELINE_MS + 2 * LAG_WINDOW_MS).baselineMs).toBe(70);
  });

  it('marks a window with a replayed request but no live sends as empty, and never a baseline', () => {
    const lag = new LiveLag();
    lag.replaySent(T);
    expect(lag.reading(T + LAG_WINDOW_MS)).toEqual({ latest: window(0, 0, T, 1) });
  });

  it("keeps memory bounded at any rate and its p90 that of the whole window", () => {
    const lag = new LiveLag();
    for (let i = 0; i < 50_000; i++) lag.record(i % 100, T);
    const { latest } = lag.reading(T + LAG_WINDOW_MS);
    expect(latest?.samples).toBe(50_000);
    // Reservoir sampling: 2,000 kept at random, their p90 within a few ms of the whole window's (90).
    expect(Math.abs((latest?.p90Ms ?? 0) - 90)).toBeLessThanOrEqual(4);
  });
});
