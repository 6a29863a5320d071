/**
 * Live traffic first: how fast a replay may start deliveries, from how long live
 * deliveries wait. Temporal's priority orders queued tasks, but a replay beside live traffic on a
 * busy box shares the CPU, the store and Temporal's persistence without any queue forming: the
 * live tail grows first. So the replay is paced like a congestion window (additive increase,
 * multiplicative decrease) on one signal, the live lag: from a live message's `receivedAt` to its
 * first request going out, measured by the worker that sends it (activities/live-lag.ts).
 * Pure: the worker's lag windows in, the next pace out.
 */

/** What one closed window of live lag showed: its start (epoch ms), how many live first sends, their 90th percentile, and how many replayed requests went out beside them. */
export interface LagWindow {
  startMs: number;
  samples: number;
  p90Ms: number;
  replaySends: number;
}

/** What the replay's page activity reads before a page: the latest closed window, and the lag live traffic has when unhurried. */
export interface LiveLagReading {
  latest?: LagWindow;
  /** The median p90 of the last BASELINE_MS's windows with no replayed request (undefined: none with enough live sends). */
  baselineMs?: number;
}

/** A replay's pace: replayed deliveries started per second, the window it was last judged on, and when it last rested. */
export interface ReplayPace {
  perSecond: number;
  judgedWindowMs?: number;
  restedAtMs: number;
}

/** Length of one lag window. */
export const LAG_WINDOW_MS = 5_000;
/** How far back the unhurried lag is looked for: windows with live traffic and no replay beside it (some five rests). */
export const BASELINE_MS = 10 * 60_000;
/** Fewer first sends than this in a window: no live traffic to protect, the replay speeds up. */
export const MIN_LIVE_SAMPLES = 5;
/** Where a replay starts, its floor (it never stops: an operator pauses it) and its ceiling. */
export const FIRST_PER_SECOND = 2;
export const MIN_PER_SECOND = 1;
export const MAX_PER_SECOND = 1_000;
/** The live lag allowed above the baseline before the replay halves its pace: 25 %, and never less than a few ms of jitter. */
const ALLOWED_RATIO = 1.25;
const ALLOWED_JITTER_MS = 5;
/**
 * Every REST_EVERY_MS the replay starts nothing for REST_MS (two windows, so one whole window
 * lies in it): the baseline is live lag with no replay beside it, never the lag the replay itself
 * made (a replay running when live traffic began would otherwise have no baseline at all).
 */
export const REST_EVERY_MS = 120_000;
export const REST_MS = 2 * LAG_WINDOW_MS;
/** A page holds about this long of sends at the pace: a pause or cancel waits for at most that, and each window is judged within a few pages. */
export const PAGE_SECONDS = 1;

/** A new replay's pace: resting first when there is no baseline to judge by. */
export const firstPace = (reading: LiveLagReading, nowMs: number): ReplayPace => ({ perSecond: FIRST_PER_SECOND, restedAtMs: reading.baselineMs === undefined ? nowMs - REST_EVERY_MS : nowMs });

/** Whether the replay rests now (starts nothing for REST_MS): due, with live traffic to measure, and a baseline to measure for (`auto`). */
export const restDue = (pace: ReplayPace, reading: LiveLagReading, nowMs: number, limitMs: number | 'auto') =>
  limitMs === 'auto' && nowMs - pace.restedAtMs >= REST_EVERY_MS && (reading.latest?.samples ?? 0) >= MIN_LIVE_SAMPLES;

/** The live lag above which a replay backs off: `limitMs` when the operator set one (REPLAY_LIVE_LAG_LIMIT), else 25 % over the baseline. */
export function lagCeilingMs(reading: LiveLagReading, limitMs: number | 'auto'): number | undefined {
  if (limitMs !== 'auto') return limitMs;
  if (reading.baselineMs === undefined) return undefined;
  return Math.max(reading.baselineMs * ALLOWED_RATIO, reading.baselineMs + ALLOWED_JITTER_MS);
}

/**
 * The replay's next pace. Each closed window is judged once: live lag over the ceiling halves the
 * pace, under it adds one per second; a window with (almost) no live traffic, or none yet to
 * compare with, doubles it.
 */
export function nextPace(pace: ReplayPace, reading: LiveLagReading, limitMs: number | 'auto'): ReplayPace {
  const { latest } = reading;
  if (latest && latest.startMs === pace.judgedWindowMs) return pace;
  const judged = { restedAtMs: pace.restedAtMs, ...(latest && { judgedWindowMs: latest.startMs }) };
  const ceiling = lagCeilingMs(reading, limitMs);
  const clamp = (perSecond: number) => Math.min(MAX_PER_SECOND, Math.max(MIN_PER_SECOND, perSecond));
  if (!latest || latest.samples < MIN_LIVE_SAMPLES || ceiling === undefined) return { perSecond: clamp(pace.perSecond * 2), ...judged };
  if (latest.p90Ms > ceiling) return { perSecond: clamp(pace.perSecond / 2), ...judged };
  return { perSecond: clamp(pace.perSecond + 1), ...judged };
}

/** Replayed deliveries one page starts at this pace: about PAGE_SECONDS of them, at least one, at most `room`. */
export function pageSizeAt(pace: ReplayPace, room: number): number {
  return Math.max(1, Math.min(room, Math.round(pace.perSecond * PAGE_SECONDS)));
}

/** The wait between two replayed deliveries' starts at this pace. */
export const spacingMs = (pace: ReplayPace) => 1_000 / pace.perSecond;
