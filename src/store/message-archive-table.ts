import { sql, type Kysely } from 'kysely';
import type { Tables } from './tables';

/**
 * The archive's table. One row per accepted message: plaintext columns that name no user
 * (the source, the UTC day, receivedAt, the messageId, the type, the user's keyed hashes) and the
 * call sealed under its subject's data key. Its primary key includes the day, so a sender's retry
 * of the same messageId on the same day archives it once.
 *
 * On PostgreSQL the table is partitioned by that day (LIST, one partition a day): retention drops
 * whole partitions, no row-by-row delete and no vacuum debt. On SQLite it is one table, pruned by a
 * range delete. `message_archive_page` serves a replay's pages: one source, in receivedAt order.
 */

export const ARCHIVE_TABLE = 'message_archive';

const DAY_MS = 86_400_000;

/** The UTC day (days since the epoch) a time falls in: the partition key. */
export const archiveDay = (ms: number) => Math.floor(ms / DAY_MS);

/** A day partition's name, readable in psql: `message_archive_2026_11_28`. */
export function partitionName(day: number): string {
  return `${ARCHIVE_TABLE}_${new Date(day * DAY_MS).toISOString().slice(0, 10).replace(/-/g, '_')}`;
}

/** The day a partition's name stands for; undefined for any other table. */
export function dayOfPartition(name: string): number | undefined {
  const match = /^message_archive_(\d{4})_(\d{2})_(\d{2})$/.exec(name);
  return match ? archiveDay(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]))) : undefined;
}

/** PostgreSQL: the day partitions that exist now. */
export async function archivePartitions(db: Kysely<Tables>): Promise<Array<{ name: string; day: number }>> {
  const { rows } = await sql<{ name: string }>`
    select child.relname as name from pg_inherits
    join pg_class parent on parent.oid = pg_inherits.inhparent
    join pg_class child on child.oid = pg_inherits.inhrelid
    join pg_namespace ns on ns.oid = parent.relnamespace
    where parent.relname = ${ARCHIVE_TABLE} and ns.nspname = current_schema()`.execute(db);
  return rows.flatMap(({ name }) => {
    const day = dayOfPartition(name);
    return day === undefined ? [] : [{ name, day }];
  });
}

/**
 * PostgreSQL: makes the partitions of these days where missing. Under a transaction-scoped
 * advisory lock, so API processes doing it at once neither fail nor wait on each other's DDL long.
 */
export async function ensureArchivePartitions(db: Kysely<Tables>, days: number[]): Promise<void> {
  const existing = new Set((await archivePartitions(db)).map((p) => p.day));
  const missing = [...new Set(days)].filter((day) => !existing.has(day));
  if (missing.length === 0) return;
  await db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext(${ARCHIVE_TABLE}))`.execute(trx);
    for (const day of missing) {
      await sql`create table if not exists ${sql.table(partitionName(day))} partition of message_archive for values in (${sql.lit(day)})`.execute(trx);
    }
  });
}

/** PostgreSQL: drops every day partition before `beforeDay`; their names. */
export async function dropArchivePartitions(db: Kysely<Tables>, beforeDay: number): Promise<string[]> {
  const old = (await archivePartitions(db)).filter((p) => p.day < beforeDay);
  for (const { name } of old) await sql`drop table if exists ${sql.table(name)}`.execute(db);
  return old.map((p) => p.name);
}
