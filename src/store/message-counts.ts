import type { Kysely } from 'kysely';
import type { FilteredReason } from '../delivery/message-counts';
import { chunks } from './chunks';
import type { Tables } from './tables';
import type { Store } from './types';

/** Rows per INSERT, well under SQLite's bound-parameter limit. */
const ROWS_PER_INSERT = 500;

/**
 * The overview's counts: every API process upserts what it decided since its last
 * flush, adding to the rows already there, so any number of APIs sum up in the same rows.
 */
export function messageCountsStore(db: Kysely<Tables>): Store['messageCounts'] {
  return {
    async add({ received, filtered }, options = {}) {
      if (received.length === 0 && filtered.length === 0 && options.deleteBeforeMinute === undefined) return;
      await db.transaction().execute(async (trx) => {
        for (const rows of chunks(received.map(({ sourceId, minute, count }) => ({ source_id: sourceId, minute, count })), ROWS_PER_INSERT)) {
          await trx
            .insertInto('received_counts')
            .values(rows)
            .onConflict((conflict) => conflict.columns(['source_id', 'minute']).doUpdateSet((eb) => ({ count: eb(eb.ref('received_counts.count'), '+', eb.ref('excluded.count')) })))
            .execute();
        }
        const filteredRows = filtered.map(({ destinationId, minute, reason, filterId, count }) => ({ destination_id: destinationId, minute, reason, filter_id: filterId, count }));
        for (const rows of chunks(filteredRows, ROWS_PER_INSERT)) {
          await trx
            .insertInto('filtered_counts')
            .values(rows)
            .onConflict((conflict) =>
              conflict.columns(['destination_id', 'minute', 'reason', 'filter_id']).doUpdateSet((eb) => ({ count: eb(eb.ref('filtered_counts.count'), '+', eb.ref('excluded.count')) })),
            )
            .execute();
        }
        if (options.deleteBeforeMinute !== undefined) {
          await trx.deleteFrom('received_counts').where('minute', '<', options.deleteBeforeMinute).execute();
          await trx.deleteFrom('filtered_counts').where('minute', '<', options.deleteBeforeMinute).execute();
        }
      });
    },

    async received(sourceId, sinceMinute, untilMinute) {
      const row = await db
        .selectFrom('received_counts')
        .select((eb) => eb.fn.sum<number | string | null>('count').as('total'))
        .where('source_id', '=', sourceId)
        .where('minute', '>=', sinceMinute)
        .where('minute', '<', untilMinute)
        .executeTakeFirst();
      return Number(row?.total ?? 0);
    },

    async filtered(destinationId, sinceMinute, untilMinute) {
      const rows = await db
        .selectFrom('filtered_counts')
        .select(['reason', 'filter_id'])
        .select((eb) => eb.fn.sum<number | string>('count').as('total'))
        .where('destination_id', '=', destinationId)
        .where('minute', '>=', sinceMinute)
        .where('minute', '<', untilMinute)
        .groupBy(['reason', 'filter_id'])
        .execute();
      return rows.map((row) => ({ reason: row.reason as FilteredReason, filterId: row.filter_id, count: Number(row.total) }));
    },
  };
}
