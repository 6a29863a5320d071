import type { Kysely } from 'kysely';
import { chunks } from './chunks';
import type { Tables } from './tables';
import type { SeenUser, Store } from './types';

/** Rows per multi-row INSERT: far below SQLite's bound-parameter limit at 4 columns a row. */
const ROWS_PER_INSERT = 500;
/** Ids per `IN (...)` list. */
const IDS_PER_QUERY = 500;

/**
 * Records that a source has seen these user ids (and the ids seen with them). Runs inside the
 * ingestion request's profile transaction: one upsert per distinct user, one insert per new link.
 */
export async function recordSeenUsers(trx: Kysely<Tables>, sourceId: string, seen: SeenUser[], now: string): Promise<void> {
  const users = seen.map(({ userId }) => ({ source_id: sourceId, user_id: userId, first_seen_at: now, last_seen_at: now }));
  for (const part of chunks(users, ROWS_PER_INSERT)) {
    await trx
      .insertInto('source_users')
      .values(part)
      .onConflict((oc) => oc.columns(['source_id', 'user_id']).doUpdateSet({ last_seen_at: (eb) => eb.ref('excluded.last_seen_at') }))
      .execute();
  }
  const links = seen.flatMap(({ userId, linkedIds }) => linkedIds.map((linked_id) => ({ source_id: sourceId, user_id: userId, linked_id, first_seen_at: now })));
  for (const part of chunks(links, ROWS_PER_INSERT)) {
    await trx.insertInto('source_user_links').values(part).onConflict((oc) => oc.doNothing()).execute();
  }
}

export function sourceUserStore(db: Kysely<Tables>): Store['sourceUsers'] {
  return {
    async sourcesThatSaw(userIds) {
      const seenBy = new Map<string, string[]>();
      for (const part of chunks(userIds, IDS_PER_QUERY)) {
        const rows = await db.selectFrom('source_users').select(['source_id', 'user_id']).where('user_id', 'in', part).execute();
        for (const { source_id, user_id } of rows) seenBy.set(source_id, [...(seenBy.get(source_id) ?? []), user_id]);
      }
      // Sorted here, not by ORDER BY: PostgreSQL sorts text by the database's collation ('B' after
      // 'a' under en-US), SQLite by code point; this order is the same on both and across chunks.
      return new Map([...seenBy.keys()].sort().map((sourceId) => [sourceId, seenBy.get(sourceId)!.sort()]));
    },

    async linkedIds(userIds) {
      const linked = new Set<string>();
      for (const part of chunks(userIds, IDS_PER_QUERY)) {
        const rows = await db.selectFrom('source_user_links').select('linked_id').where('user_id', 'in', part).execute();
        for (const { linked_id } of rows) linked.add(linked_id);
      }
      for (const id of userIds) linked.delete(id);
      return [...linked].sort();
    },

    async forget(ids) {
      for (const part of chunks(ids, IDS_PER_QUERY)) {
        await db.deleteFrom('source_users').where('user_id', 'in', part).execute();
        await db.deleteFrom('source_user_links').where((eb) => eb.or([eb('user_id', 'in', part), eb('linked_id', 'in', part)])).execute();
      }
    },
  };
}
