import { sql, type Kysely, type RawBuilder } from 'kysely';
import { claimSend, reserveSlot, SEND_AHEAD_US } from '../delivery/flow-control';
import { dialectOf } from './dialect';
import type { Tables } from './tables';
import type { Store } from './types';
import { writeTransaction } from './write-transaction';

/**
 * Flow control state every API and worker process shares: the rate limiter of each
 * rate-limited destination and the URLs paused by backpressure.
 *
 * One clock: every time kept here is the database's, read inside the statement that
 * compares it, and every answer is relative ("wait N ms"; the limiter's in µs). Workers' clocks
 * never meet in a comparison, so a worker whose clock runs ahead cannot push another's slots out,
 * nor one behind hold a URL longer than it asked. (SQLite's clock is the host's, which is every process's there.)
 *
 * The limiter is asked before every attempt of a rate-limited destination, from every worker at
 * once, so each ask is one atomic upsert (the row lock of the statement, on both dialects) rather
 * than a read-then-write transaction: on SQLite a transaction held across the event loop's turns
 * made other processes wait on the file lock, synchronously, long enough for attempts to time out
 * under load. The statements do what reserveSlot and claimSend in delivery/flow-control.ts decide
 * (the unit tables); test/integration/store-dialects.test.ts holds them to the same answers.
 */
export function flowControlStore(db: Kysely<Tables>): Store['flowControl'] {
  const postgres = dialectOf(db) === 'postgres';
  // Stable within a statement on both: SQLite's 'now' within one step, PostgreSQL's now() within the transaction.
  const nowMs: RawBuilder<number> = postgres ? sql<number>`floor(extract(epoch from now()) * 1000)::bigint` : sql<number>`cast((julianday('now') - 2440587.5) * 86400000 as integer)`;
  /**
   * The limiter's now in microseconds, one per statement. PostgreSQL: clock_timestamp(),
   * read where the statement compares it, so an ask that queued on the row lock behind another is
   * judged by the time it got the row, not when it began (now() would make it wait for a send that
   * is already an interval back); the µs between two reads in one statement only shorten a wait the
   * claim at send time still checks. SQLite's own clock has millisecond resolution, so the host's
   * clock is read here and bound to the statement: one machine, every process's clock. The wall
   * clock (Date.now), in µs units: not performance.timeOrigin + performance.now(), which is
   * monotonic time counted from the process's start and drifts from the wall clock (a loaded or
   * paused VM's processes disagreed by a minute), so two processes sharing a store would disagree.
   */
  /** A µs count as the column's integer type (better-sqlite3 binds a JS number as a real). */
  const us = (value: number): RawBuilder<number> => (postgres ? sql<number>`cast(${value} as bigint)` : sql<number>`cast(${value} as integer)`);
  const limiterNowUs = (): RawBuilder<number> =>
    postgres ? sql<number>`floor(extract(epoch from clock_timestamp()) * 1000000)::bigint` : us(Date.now() * 1_000);
  /** The later of `column` and now (GREATEST/max differ between the dialects; CASE does not). */
  const laterOf = (column: RawBuilder<number>, now: RawBuilder<number>) => sql<number>`case when ${column} > ${now} then ${column} else ${now} end`;
  const current = async (destinationId: string) =>
    db.selectFrom('destination_rates').select(['next_slot_us', 'last_send_us', limiterNowUs().as('now_us')]).where('destination_id', '=', destinationId).executeTakeFirst();
  const pressure = (row: { until_ms: number; now_ms: number } | undefined) => {
    const leftMs = row ? Number(row.until_ms) - Number(row.now_ms) : 0;
    return row && leftMs > 0 ? { untilMs: Number(row.until_ms), leftMs } : undefined;
  };

  return {
    async reserveSlot(destinationId, intervalUs, maxWaitUs) {
      const now = limiterNowUs();
      const interval = us(intervalUs);
      const later = laterOf(sql.ref('destination_rates.next_slot_us'), now);
      const taken = await db
        .insertInto('destination_rates')
        .values({ destination_id: destinationId, next_slot_us: sql<number>`${now} + ${interval}`, last_send_us: null })
        .onConflict((c) =>
          c
            .column('destination_id')
            .doUpdateSet({ next_slot_us: sql<number>`${later} + ${interval}` })
            .where(sql<boolean>`${later} - ${now} <= ${us(Math.min(maxWaitUs, Number.MAX_SAFE_INTEGER))}`),
        )
        .returning(['next_slot_us', now.as('now_us')])
        .executeTakeFirst();
      if (taken) {
        const slotUs = Number(taken.next_slot_us) - intervalUs;
        return { slotUs, waitUs: Math.max(0, slotUs - Number(taken.now_us)), reserved: true };
      }
      // Not taken (past the hold left): say how far the next slot is, leaving it to the others.
      const row = await current(destinationId);
      const nowUs = Number(row?.now_us ?? 0);
      const { slotUs } = reserveSlot(row && Number(row.next_slot_us), nowUs, intervalUs, maxWaitUs);
      return { slotUs, waitUs: Math.max(0, slotUs - nowUs), reserved: false };
    },

    async claimSend(destinationId, intervalUs) {
      const now = limiterNowUs();
      const interval = us(intervalUs);
      // The send's moment: an interval after the last (none yet: null, so now), or now if later.
      const sendAt = laterOf(sql<number>`${sql.ref('destination_rates.last_send_us')} + ${interval}`, now);
      const claimed = await db
        .insertInto('destination_rates')
        .values({ destination_id: destinationId, next_slot_us: sql<number>`${now} + ${interval}`, last_send_us: now })
        .onConflict((c) =>
          c
            .column('destination_id')
            .doUpdateSet({ last_send_us: sendAt })
            .where(sql<boolean>`${sendAt} - ${now} < ${us(SEND_AHEAD_US)}`),
        )
        .returning(['last_send_us', now.as('now_us')])
        .executeTakeFirst();
      if (claimed) {
        const sendAtUs = Number(claimed.last_send_us);
        return { claimed: true, sendAtUs, waitUs: Math.max(0, sendAtUs - Number(claimed.now_us)) };
      }
      const row = await current(destinationId);
      const nowUs = Number(row?.now_us ?? 0);
      const { sendAtUs, waitUs } = claimSend(row?.last_send_us === null || row === undefined ? undefined : Number(row.last_send_us), nowUs, intervalUs);
      // Refused by the statement's now, answered by the read's, a little later: never a wait of 0.
      return { claimed: false, sendAtUs, waitUs: Math.max(1, waitUs) };
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
