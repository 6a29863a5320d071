import { sql, type Kysely, type RawBuilder } from 'kysely';
import { reserveSlot } from '../delivery/flow-control';
import { dialectOf } from './dialect';
import type { Tables } from './tables';
import type { Store } from './types';
import { writeTransaction } from './write-transaction';

/**
 * Flow control state every API and worker process shares (issue 20): the rate limiter of each
 * rate-limited destination and the URLs paused by backpressure.
 *
 * One clock (issue 29): every time kept here is the database's, read inside the statement that
 * compares it, and every answer is relative ("wait N ms"). Workers' clocks never meet in a
 * comparison, so a worker whose clock runs ahead cannot push another's slots out, nor one behind
 * hold a URL longer than it asked. (SQLite's clock is the host's, which is every process's there.)
 *
 * The limiter is asked before every attempt of a rate-limited destination, from every worker at
 * once, so each ask is one atomic upsert (the row lock of the statement, on both dialects) rather
 * than a read-then-write transaction: on SQLite a transaction held across the event loop's turns
 * made other processes wait on the file lock, synchronously, long enough for attempts to time out
 * under load. The statements do what reserveSlot and claimSend in delivery/flow-control.ts decide
 * (the unit tables); test/integration/store-dialects.test.ts holds them to the same answers.
 */
export function flowControlStore(db: Kysely<Tables>): Store['flowControl'] {
  // Stable within a statement on both: SQLite's 'now' within one step, PostgreSQL's now() within the transaction.
  const nowMs: RawBuilder<number> =
    dialectOf(db) === 'postgres' ? sql<number>`floor(extract(epoch from now()) * 1000)::bigint` : sql<number>`cast((julianday('now') - 2440587.5) * 86400000 as integer)`;
  /** The later of the destination's next free slot and now (GREATEST/max differ between the dialects; CASE does not). */
  const later = sql<number>`case when ${sql.ref('destination_rates.next_slot_ms')} > ${nowMs} then ${sql.ref('destination_rates.next_slot_ms')} else ${nowMs} end`;
  const current = async (destinationId: string) =>
    db.selectFrom('destination_rates').select(['next_slot_ms', 'last_send_ms', nowMs.as('now_ms')]).where('destination_id', '=', destinationId).executeTakeFirst();
  const pressure = (row: { until_ms: number; now_ms: number } | undefined) => {
    const leftMs = row ? Number(row.until_ms) - Number(row.now_ms) : 0;
    return row && leftMs > 0 ? { untilMs: Number(row.until_ms), leftMs } : undefined;
  };

  return {
    async reserveSlot(destinationId, intervalMs, maxWaitMs) {
      const taken = await db
        .insertInto('destination_rates')
        .values({ destination_id: destinationId, next_slot_ms: sql<number>`${nowMs} + ${intervalMs}`, last_send_ms: null })
        .onConflict((c) =>
          c
            .column('destination_id')
            .doUpdateSet({ next_slot_ms: sql<number>`${later} + ${intervalMs}` })
            .where(sql<boolean>`${later} - ${nowMs} <= ${maxWaitMs}`),
        )
        .returning(['next_slot_ms', nowMs.as('now_ms')])
        .executeTakeFirst();
      if (taken) {
        const slotMs = Number(taken.next_slot_ms) - intervalMs;
        return { slotMs, waitMs: Math.max(0, slotMs - Number(taken.now_ms)), reserved: true };
      }
      // Not taken (past the hold left): say how far the next slot is, leaving it to the others.
      const row = await current(destinationId);
      const now = Number(row?.now_ms ?? 0);
      const { slotMs } = reserveSlot(row && Number(row.next_slot_ms), now, intervalMs, maxWaitMs);
      return { slotMs, waitMs: Math.max(0, slotMs - now), reserved: false };
    },

    async claimSend(destinationId, intervalMs) {
      const claimed = await db
        .insertInto('destination_rates')
        .values({ destination_id: destinationId, next_slot_ms: sql<number>`${nowMs} + ${intervalMs}`, last_send_ms: nowMs })
        .onConflict((c) =>
          c
            .column('destination_id')
            .doUpdateSet({ last_send_ms: nowMs })
            .where(sql<boolean>`destination_rates.last_send_ms is null or destination_rates.last_send_ms + ${intervalMs} <= ${nowMs}`),
        )
        .returning('last_send_ms')
        .executeTakeFirst();
      if (claimed) return 0;
      const row = await current(destinationId);
      return row?.last_send_ms === null || row === undefined ? 0 : Math.max(1, Number(row.last_send_ms) + intervalMs - Number(row.now_ms));
    },

    async backpressure(destinationId, url, forMs, reason) {
      const untilMs = sql<number>`${nowMs} + ${forMs}`;
      return writeTransaction(db, async (trx) => {
        // The destination may be gone meanwhile (foreign key); then there is nothing to pause.
        if (!(await trx.selectFrom('destinations').select('id').where('id', '=', destinationId).executeTakeFirst())) return undefined;
        await trx
          .insertInto('webhook_backpressure')
          .values({ destination_id: destinationId, url, until_ms: untilMs, reason })
          .onConflict((c) =>
            c
              .columns(['destination_id', 'url'])
              .doUpdateSet({ until_ms: untilMs, reason })
              .where('webhook_backpressure.until_ms', '<', untilMs),
          )
          .execute();
        return pressure(await trx.selectFrom('webhook_backpressure').select(['until_ms', nowMs.as('now_ms')]).where('destination_id', '=', destinationId).where('url', '=', url).executeTakeFirst());
      });
    },

    async backpressureLeft(destinationId, url) {
      const left = pressure(await db.selectFrom('webhook_backpressure').select(['until_ms', nowMs.as('now_ms')]).where('destination_id', '=', destinationId).where('url', '=', url).executeTakeFirst());
      // A pause found over is removed (unless renewed meanwhile): destination reads stop carrying it, so its attempts stop asking.
      if (!left) await db.deleteFrom('webhook_backpressure').where('destination_id', '=', destinationId).where('url', '=', url).where('until_ms', '<=', nowMs).execute();
      return left;
    },

    async clearBackpressure(destinationId, url) {
      const result = await db.deleteFrom('webhook_backpressure').where('destination_id', '=', destinationId).where('url', '=', url).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
  };
}
