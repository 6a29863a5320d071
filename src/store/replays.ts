import type { Kysely } from 'kysely';
import { isReplayOpen, type Replay, type ReplayCounts, type ReplayStatus } from '../delivery/replay';
import type { ReplayRow, Tables } from './tables';
import type { Store } from './types';

const countColumns = (counts: ReplayCounts) => ({
  matched: counts.matched,
  started: counts.started,
  delivered: counts.delivered,
  failed: counts.failed,
  skipped_erased: counts.skipped.erased,
  skipped_suppressed: counts.skipped.suppressed,
  skipped_filtered: counts.skipped.filtered,
  skipped_blocked: counts.skipped.blocked,
  skipped_duplicate: counts.skipped.duplicate,
});

/** A blocked-only replay has no one destination: '' in the NOT NULL column (migration 0028). */
const EVERY_DESTINATION = '';

const toReplay = (row: ReplayRow): Replay => ({
  id: row.id,
  sourceId: row.source_id,
  destinationId: row.destination_id === EVERY_DESTINATION ? null : row.destination_id,
  since: row.since,
  until: row.until,
  trigger: row.trigger,
  dryRun: row.dry_run === 1,
  blockedOnly: Number(row.blocked_only) === 1,
  status: row.status as ReplayStatus,
  matched: Number(row.matched),
  started: Number(row.started),
  delivered: Number(row.delivered),
  failed: Number(row.failed),
  skipped: {
    erased: Number(row.skipped_erased),
    suppressed: Number(row.skipped_suppressed),
    filtered: Number(row.skipped_filtered),
    blocked: Number(row.skipped_blocked),
    duplicate: Number(row.skipped_duplicate),
  },
  createdAt: row.created_at,
  finishedAt: row.finished_at,
});

/** Replays: the row is what the API shows; the replay's workflow keeps it current. */
export function replayStore(db: Kysely<Tables>): Store['replays'] {
  const get = async (id: string) => {
    const row = await db.selectFrom('replays').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toReplay(row);
  };
  return {
    async create(replay) {
      await db
        .insertInto('replays')
        .values({
          id: replay.id,
          source_id: replay.sourceId,
          destination_id: replay.destinationId ?? EVERY_DESTINATION,
          since: replay.since,
          until: replay.until,
          trigger: replay.trigger,
          dry_run: replay.dryRun ? 1 : 0,
          blocked_only: replay.blockedOnly ? 1 : 0,
          status: replay.status,
          ...countColumns(replay),
          created_at: replay.createdAt,
          finished_at: replay.finishedAt,
        })
        .execute();
    },
    get,
    async list(limit) {
      const rows = await db.selectFrom('replays').selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
      return rows.map(toReplay);
    },
    async saveCounts(id, counts) {
      await db.updateTable('replays').set(countColumns(counts)).where('id', '=', id).execute();
    },
    async setStatus(id, status, at) {
      await db
        .updateTable('replays')
        .set({ status, ...(!isReplayOpen(status) && { finished_at: at }) })
        .where('id', '=', id)
        .where('status', 'in', ['running', 'paused'])
        .execute();
      return get(id);
    },
  };
}
