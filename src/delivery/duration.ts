/** Durations as written in env vars and APIs: `500ms`, `5s`, `10m`, `4h`, `1d` (a bare number means milliseconds). */
const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

export function parseDuration(text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(text);
  if (!match) throw new Error(`"${text}" is not a duration (use e.g. 500ms, 5s, 10m, 4h, 1d)`);
  return Math.round(Number(match[1]) * UNIT_MS[match[2] ?? 'ms']);
}

export function formatDuration(ms: number): string {
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    if (ms >= UNIT_MS[unit] && ms % UNIT_MS[unit] === 0) return `${ms / UNIT_MS[unit]}${unit}`;
  }
  return `${ms}ms`;
}
