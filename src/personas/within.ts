/**
 * `within` windows of event conditions and computed traits: "look back this far from the sync".
 * Whole minutes, hours, days or weeks: analytics windows are written that way ("last 30 days"),
 * and a sub-minute window would change between two pages of the same sync.
 */
const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 } as const;

/** Ten years: long enough for any retention question, short enough to stay a valid date. */
const MAX_WITHIN_MS = 3650 * UNIT_MS.d;

export function parseWithin(text: string): number {
  const match = /^(\d{1,7})(m|h|d|w)$/.exec(text);
  if (!match) throw new Error(`${JSON.stringify(text)} is not a window; use a whole number of m, h, d or w, e.g. "30d"`);
  const ms = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  if (ms === 0) throw new Error('must be longer than zero');
  if (ms > MAX_WITHIN_MS) throw new Error('must be at most 3650d (ten years)');
  return ms;
}

/** Events at or after this instant are inside the window (ISO 8601, comparable as text with stored timestamps). */
export function windowStart(within: string, nowMs: number): string {
  return new Date(nowMs - parseWithin(within)).toISOString();
}
