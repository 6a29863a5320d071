import { formatDuration } from './duration';

/**
 * What a replay's range can read of the archive, decided once when the replay is asked
 * for. ARCHIVE_RETENTION bounds what a replay reads (activities/replay-archive.ts reads from
 * `max(since, now − retention)`), so a range starting earlier reads from `archiveFrom`, and says so;
 * a range that can read nothing at all is refused, naming why, rather than ending `matched 0`.
 */
export type ReplayRange = { ok: true; archiveFrom?: string } | { ok: false; field: 'since' | 'until'; rule: string };

export function replayRange(since: string, until: string, nowMs: number, retentionMs: number): ReplayRange {
  const sinceMs = Date.parse(since);
  const untilMs = Date.parse(until);
  if (sinceMs >= untilMs) return { ok: false, field: 'until', rule: 'must be later than since' };
  const now = new Date(nowMs).toISOString();
  if (sinceMs > nowMs) return { ok: false, field: 'since', rule: `is in the future (now is ${now}): nothing received in this range is archived yet` };
  const archiveFromMs = nowMs - retentionMs;
  const archiveFrom = new Date(archiveFromMs).toISOString();
  if (untilMs <= archiveFromMs) {
    return { ok: false, field: 'until', rule: `is before the oldest message still archived (received at ${archiveFrom}; ARCHIVE_RETENTION is ${formatDuration(retentionMs)}): the whole range is past retention, nothing in it can be replayed` };
  }
  return sinceMs < archiveFromMs ? { ok: true, archiveFrom } : { ok: true };
}

/**
 * The oldest moment a replay made at `createdAt` could read, when its range starts before it: what
 * the replay's view shows beside its counts, so `matched` is not read as covering the whole range.
 */
export function replayArchiveFrom(replay: { since: string; createdAt: string }, retentionMs: number): string | undefined {
  const archiveFromMs = Date.parse(replay.createdAt) - retentionMs;
  return Date.parse(replay.since) < archiveFromMs ? new Date(archiveFromMs).toISOString() : undefined;
}
