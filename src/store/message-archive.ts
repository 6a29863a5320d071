import { sql, type Kysely } from 'kysely';
import type { ArchivedCall } from '../delivery/replay';
import type { SealedBody } from '../delivery/types';
import { chunks } from './chunks';
import { dialectOf } from './dialect';
import { ARCHIVE_TABLE, archiveDay, dropArchivePartitions, ensureArchivePartitions } from './message-archive-table';
import type { MessageArchiveRow, Tables } from './tables';
import type { ArchivedMessage, Store } from './types';

/** Rows per INSERT (8 parameters each) and ids per `IN (...)` list. */
const PER_QUERY = 500;

/** Days ahead whose partitions are made before a message needs them (PostgreSQL). */
const DAYS_AHEAD = 2;

/** PostgreSQL's "no partition of relation … found for row" (check_violation on a partitioned insert). */
const NO_PARTITION = '23514';

const toRow = (m: ArchivedMessage): MessageArchiveRow => ({
  source_id: m.sourceId,
  day: archiveDay(Date.parse(m.receivedAt)),
  received_at: m.receivedAt,
  message_id: m.messageId,
  type: m.type,
  user_hash: m.userHash ?? null,
  anonymous_hash: m.anonymousHash ?? null,
  body: JSON.stringify(m.call),
  plan_status: m.planStatus ?? null,
});

const fromRow = (row: MessageArchiveRow): ArchivedMessage => ({
  sourceId: row.source_id,
  messageId: row.message_id,
  type: row.type as ArchivedMessage['type'],
  receivedAt: row.received_at,
  ...(row.user_hash !== null && { userHash: row.user_hash }),
  ...(row.anonymous_hash !== null && { anonymousHash: row.anonymous_hash }),
  call: JSON.parse(row.body) as SealedBody | ArchivedCall,
  ...(row.plan_status !== null && { planStatus: row.plan_status as NonNullable<ArchivedMessage['planStatus']> }),
});

/** A page's position: the last row's (receivedAt, messageId), opaque to callers. */
const encodeCursor = (row: Pick<MessageArchiveRow, 'received_at' | 'message_id'>) => Buffer.from(JSON.stringify([row.received_at, row.message_id])).toString('base64url');

function decodeCursor(cursor: string): [string, string] {
  const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!Array.isArray(value) || value.length !== 2 || !value.every((v) => typeof v === 'string')) throw new Error('archive cursor is not one a page gave');
  return value as [string, string];
}

const isMissingPartition = (err: unknown) => (err as { code?: unknown }).code === NO_PARTITION;

/** The archive of accepted messages: see message-archive-table.ts for its shape. */
export function messageArchiveStore(db: Kysely<Tables>): Store['archive'] {
  const postgres = dialectOf(db) === 'postgres';

  async function insert(rows: MessageArchiveRow[]): Promise<void> {
    for (const part of chunks(rows, PER_QUERY)) {
      await db.insertInto(ARCHIVE_TABLE).values(part).onConflict((oc) => oc.columns(['source_id', 'day', 'message_id']).doNothing()).execute();
    }
  }

  return {
    async add(messages) {
      if (messages.length === 0) return;
      const rows = messages.map(toRow);
      try {
        await insert(rows);
      } catch (err) {
        // A day whose partition the periodic preparation has not made yet (a process started just
        // before midnight, or a clock ahead): make it, then write again.
        if (!postgres || !isMissingPartition(err)) throw err;
        await ensureArchivePartitions(db, rows.map((row) => row.day));
        await insert(rows);
      }
    },

    async page(sourceId, { since, until, planStatus }, size, cursor) {
      let query = db
        .selectFrom(ARCHIVE_TABLE)
        .selectAll()
        .where('source_id', '=', sourceId)
        .where('received_at', '>=', since)
        .where('received_at', '<', until);
      // A blocked-only replay reads what the plan blocked at ingest (the page index still orders it).
      if (planStatus !== undefined) query = query.where('plan_status', '=', planStatus);
      if (cursor !== undefined) {
        const [receivedAt, messageId] = decodeCursor(cursor);
        query = query.where((eb) => eb.or([eb('received_at', '>', receivedAt), eb.and([eb('received_at', '=', receivedAt), eb('message_id', '>', messageId)])]));
      }
      const rows = await query.orderBy('received_at').orderBy('message_id').limit(size + 1).execute();
      const more = rows.length > size;
      const page = more ? rows.slice(0, size) : rows;
      return { messages: page.map(fromRow), ...(more && { next: encodeCursor(page[page.length - 1]) }) };
    },

    async prepare(nowMs) {
      if (!postgres) return;
      const today = archiveDay(nowMs);
      await ensureArchivePartitions(db, Array.from({ length: DAYS_AHEAD + 1 }, (_, i) => today + i));
    },

    async prune(nowMs, retentionMs) {
      const cutoffMs = nowMs - retentionMs;
      if (retentionMs <= 0) {
        // ARCHIVE_RETENTION=0 keeps nothing: past days' partitions go whole, and
        // the rows of today's (and of any day ahead a process still archiving made) row by row.
        const droppedPartitions = postgres ? await dropArchivePartitions(db, archiveDay(nowMs)) : [];
        const result = await db.deleteFrom(ARCHIVE_TABLE).executeTakeFirst();
        return { deleted: Number(result.numDeletedRows), droppedPartitions };
      }
      if (postgres) {
        // A partition goes once its whole day is past retention: rows live up to a day longer, but
        // replays read none of them (ARCHIVE_RETENTION bounds what they read), and nothing is vacuumed.
        return { deleted: 0, droppedPartitions: await dropArchivePartitions(db, archiveDay(cutoffMs)) };
      }
      const result = await db.deleteFrom(ARCHIVE_TABLE).where('received_at', '<', new Date(cutoffMs).toISOString()).executeTakeFirst();
      return { deleted: Number(result.numDeletedRows), droppedPartitions: [] };
    },

    async forget(idHashes) {
      let deleted = 0;
      for (const part of chunks([...new Set(idHashes)], PER_QUERY)) {
        const result = await db
          .deleteFrom(ARCHIVE_TABLE)
          .where((eb) => eb.or([eb('user_hash', 'in', part), eb('anonymous_hash', 'in', part)]))
          .executeTakeFirst();
        deleted += Number(result.numDeletedRows);
      }
      return deleted;
    },
  };
}

/** For sizing (docs/production.md): the archive's bytes on disk with its indexes (PostgreSQL only). */
export async function archiveBytes(db: Kysely<Tables>): Promise<number> {
  const { rows } = await sql<{ bytes: string }>`
    select coalesce(sum(pg_total_relation_size(inhrelid)), 0)::text as bytes from pg_inherits where inhparent = ${ARCHIVE_TABLE}::regclass`.execute(db);
  return Number(rows[0]?.bytes ?? 0);
}
