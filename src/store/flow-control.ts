import type { Kysely } from 'kysely';
import { claimSend, reserveSlot } from '../delivery/flow-control';
import type { Tables } from './tables';
import type { Store } from './types';
import { writeTransaction } from './write-transaction';

/**
 * Flow control state every API and worker process shares (issue 20): the rate limiter of each
 * rate-limited destination (one row, read and written in one write transaction, so two workers
 * never take the same slot) and the URLs paused by backpressure. The arithmetic is pure
 * (delivery/flow-control.ts); this only reads and writes it.
 */
export function flowControlStore(db: Kysely<Tables>): Store['flowControl'] {
  const rateRow = (trx: Kysely<Tables>, destinationId: string) => trx.selectFrom('destination_rates').selectAll().where('destination_id', '=', destinationId).executeTakeFirst();

  return {
    async reserveSlot(destinationId, intervalMs, nowMs, maxWaitMs) {
      return writeTransaction(db, async (trx) => {
        const row = await rateRow(trx, destinationId);
        const slot = reserveSlot(row && Number(row.next_slot_ms), nowMs, intervalMs, maxWaitMs);
        if (slot.reserved) {
          await trx
            .insertInto('destination_rates')
            .values({ destination_id: destinationId, next_slot_ms: slot.nextSlotMs!, last_send_ms: null })
            .onConflict((c) => c.column('destination_id').doUpdateSet({ next_slot_ms: slot.nextSlotMs! }))
            .execute();
        }
        return { slotMs: slot.slotMs, reserved: slot.reserved };
      });
    },

    async claimSend(destinationId, intervalMs, nowMs) {
      return writeTransaction(db, async (trx) => {
        const row = await rateRow(trx, destinationId);
        const last = row?.last_send_ms === null || row === undefined ? undefined : Number(row.last_send_ms);
        const claim = claimSend(last, nowMs, intervalMs);
        if (claim.waitMs > 0) return claim.waitMs;
        await trx
          .insertInto('destination_rates')
          .values({ destination_id: destinationId, next_slot_ms: nowMs + intervalMs, last_send_ms: nowMs })
          .onConflict((c) => c.column('destination_id').doUpdateSet({ last_send_ms: nowMs }))
          .execute();
        return 0;
      });
    },

    async backpressure(destinationId, url, untilMs, reason) {
      await writeTransaction(db, async (trx) => {
        // The destination may be gone meanwhile (foreign key); then there is nothing to pause.
        if (!(await trx.selectFrom('destinations').select('id').where('id', '=', destinationId).executeTakeFirst())) return;
        const current = await trx.selectFrom('webhook_backpressure').select('until_ms').where('destination_id', '=', destinationId).where('url', '=', url).executeTakeFirst();
        if (current && Number(current.until_ms) >= untilMs) return;
        await trx
          .insertInto('webhook_backpressure')
          .values({ destination_id: destinationId, url, until_ms: untilMs, reason })
          .onConflict((c) => c.columns(['destination_id', 'url']).doUpdateSet({ until_ms: untilMs, reason }))
          .execute();
      });
    },
  };
}
