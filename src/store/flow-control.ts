import { sql, type Kysely } from 'kysely';
import { reserveSlot } from '../delivery/flow-control';
import type { Tables } from './tables';
import type { Store } from './types';
import { writeTransaction } from './write-transaction';

/**
 * Flow control state every API and worker process shares (issue 20): the rate limiter of each
 * rate-limited destination and the URLs paused by backpressure.
 *
 * The limiter is asked before every attempt of a rate-limited destination, from every worker at
 * once, so each ask is one atomic upsert (the row lock of the statement, on both dialects) rather
 * than a read-then-write transaction: on SQLite a transaction held across the event loop's turns
 * made other processes wait on the file lock, synchronously, long enough for attempts to time out
 * under load. The statements do what reserveSlot and claimSend in delivery/flow-control.ts decide
 * (the unit tables); test/integration/store-dialects.test.ts holds them to the same answers.
 */
export function flowControlStore(db: Kysely<Tables>): Store['flowControl'] {
  /** The later of the destination's next free slot and now (GREATEST/max differ between the dialects; CASE does not). */
  const later = (nowMs: number) => sql<number>`case when ${sql.ref('destination_rates.next_slot_ms')} > ${nowMs} then ${sql.ref('destination_rates.next_slot_ms')} else ${nowMs} end`;
  const current = async (destinationId: string) => db.selectFrom('destination_rates').selectAll().where('destination_id', '=', destinationId).executeTakeFirst();

  return {
    async reserveSlot(destinationId, intervalMs, nowMs, maxWaitMs) {
      const taken = await db
        .insertInto('destination_rates')
        .values({ destination_id: destinationId, next_slot_ms: nowMs + intervalMs, last_send_ms: null })
        .onConflict((c) =>
          c
            .column('destination_id')
            .doUpdateSet({ next_slot_ms: sql<number>`${later(nowMs)} + ${intervalMs}` })
            .where(sql<boolean>`${later(nowMs)} - ${nowMs} <= ${maxWaitMs}`),
        )
        .returning('next_slot_ms')
        .executeTakeFirst();
      if (taken) return { slotMs: Number(taken.next_slot_ms) - intervalMs, reserved: true };
      // Not taken (past the hold left): say how far the next slot is, leaving it to the others.
      const row = await current(destinationId);
      return { slotMs: reserveSlot(row && Number(row.next_slot_ms), nowMs, intervalMs, maxWaitMs).slotMs, reserved: false };
    },

    async claimSend(destinationId, intervalMs, nowMs) {
      const claimed = await db
        .insertInto('destination_rates')
        .values({ destination_id: destinationId, next_slot_ms: nowMs + intervalMs, last_send_ms: nowMs })
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
      return row?.last_send_ms === null || row === undefined ? 0 : Math.max(1, Number(row.last_send_ms) + intervalMs - nowMs);
    },

    async backpressure(destinationId, url, untilMs, reason) {
      await writeTransaction(db, async (trx) => {
        // The destination may be gone meanwhile (foreign key); then there is nothing to pause.
        if (!(await trx.selectFrom('destinations').select('id').where('id', '=', destinationId).executeTakeFirst())) return;
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
      });
    },
  };
}
