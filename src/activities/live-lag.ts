import { BASELINE_MS, LAG_WINDOW_MS, MIN_LIVE_SAMPLES, type LagWindow, type LiveLagReading } from '../delivery/replay-pace';

/** Samples kept per window: a p90 of this many is plenty, and memory stays bounded at any rate. */
const MAX_SAMPLES = 2_000;

/**
 * The live lag this worker sees (live traffic first): for each live message's first
 * request, how long after its `receivedAt` it went out. Kept in memory in windows of LAG_WINDOW_MS;
 * a replay's page activity reads it to pace the replay (delivery/replay-pace.ts). Per worker
 * process: with several workers each replay page is paced by the live traffic of the worker
 * that runs it, a sample of all of it.
 */
export class LiveLag {
  private current?: { startMs: number; lags: number[]; seen: number; replaySends: number };
  private closed: LagWindow[] = [];

  /** One live first send: `lagMs` after its message was received, at `atMs`. */
  record(lagMs: number, atMs: number): void {
    const window = this.windowAt(atMs);
    window.seen++;
    // Past MAX_SAMPLES, each new sample replaces a random one (reservoir sampling): the p90 stays the window's.
    if (window.lags.length < MAX_SAMPLES) window.lags.push(lagMs);
    else {
      const slot = Math.floor(Math.random() * window.seen);
      if (slot < MAX_SAMPLES) window.lags[slot] = lagMs;
    }
  }

  /** One replayed request sent at `atMs`: its window no longer shows live traffic unhurried. */
  replaySent(atMs: number): void {
    this.windowAt(atMs).replaySends++;
  }

  /**
   * The latest closed window and the unhurried lag, as of `nowMs`: the median p90 of the last
   * BASELINE_MS's windows in which this worker sent no replayed request (before a replay, and its
   * rests). The median, not the lowest: a window's p90 is noisy, and the lowest of many is below
   * what live traffic normally sees.
   */
  reading(nowMs: number): LiveLagReading {
    this.roll(nowMs - (nowMs % LAG_WINDOW_MS));
    const windowStart = nowMs - (nowMs % LAG_WINDOW_MS);
    const last = this.closed.at(-1);
    // The window just before now; an older one means no live first send since (an empty window).
    const latest = last && last.startMs === windowStart - LAG_WINDOW_MS ? last : { startMs: windowStart - LAG_WINDOW_MS, samples: 0, p90Ms: 0, replaySends: 0 };
    const clean = this.closed.filter((w) => w.samples >= MIN_LIVE_SAMPLES && w.replaySends === 0 && w.startMs >= nowMs - BASELINE_MS).map((w) => w.p90Ms);
    return { latest, ...(clean.length > 0 && { baselineMs: median(clean) }) };
  }

  private windowAt(atMs: number) {
    const startMs = atMs - (atMs % LAG_WINDOW_MS);
    this.roll(startMs);
    if (!this.current) this.current = { startMs, lags: [], seen: 0, replaySends: 0 };
    return this.current;
  }

  /** Closes the current window once time has moved past it, and forgets windows older than BASELINE_MS. */
  private roll(startMs: number): void {
    if (this.current && this.current.startMs < startMs) {
      const { startMs: start, lags, seen, replaySends } = this.current;
      this.closed.push({ startMs: start, samples: seen, p90Ms: seen > 0 ? quantile(lags, 0.9) : 0, replaySends });
      this.current = undefined;
    }
    while (this.closed.length > 0 && this.closed[0].startMs < startMs - BASELINE_MS) this.closed.shift();
  }
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))];
}

const median = (values: number[]) => quantile(values, 0.5);
