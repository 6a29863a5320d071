import type { Kysely, Selectable } from 'kysely';
import type { FilterAction, FilterSettings } from '../rules/destination-filters';
import { newId } from './ids';
import type { DestinationFilterRow, Tables } from './tables';
import type { DestinationFilterRecord, Store } from './types';
import { writeTransaction } from './write-transaction';

function toFilter(row: Selectable<DestinationFilterRow>): DestinationFilterRecord {
  return {
    id: row.id,
    destinationId: row.destination_id,
    title: row.title,
    ...(row.description === null ? {} : { description: row.description }),
    enabled: row.enabled === 1,
    if: row.condition,
    actions: JSON.parse(row.actions) as FilterAction[],
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

const settingsColumns = (settings: FilterSettings) => ({
  title: settings.title,
  description: settings.description ?? null,
  enabled: settings.enabled ? 1 : 0,
  condition: settings.if,
  actions: JSON.stringify(settings.actions),
});

export function destinationFilterStore(db: Kysely<Tables>): Store['destinationFilters'] {
  const find = (destinationId: string, filterId: string) =>
    db.selectFrom('destination_filters').selectAll().where('destination_id', '=', destinationId).where('id', '=', filterId).executeTakeFirst();
  return {
    async create(destinationId, settings, limit) {
      // Count and insert in one write transaction: two requests at once cannot make an eleventh.
      return writeTransaction(db, async (trx) => {
        const { count } = await trx
          .selectFrom('destination_filters')
          .select((eb) => eb.fn.countAll<number>().as('count'))
          .where('destination_id', '=', destinationId)
          .executeTakeFirstOrThrow();
        if (Number(count) >= limit) return undefined;
        const at = new Date().toISOString();
        const row: DestinationFilterRow = { id: newId('flt'), destination_id: destinationId, ...settingsColumns(settings), created_at: at, updated_at: at };
        await trx.insertInto('destination_filters').values(row).execute();
        return toFilter(row);
      });
    },

    async list(destinationId) {
      const rows = await db.selectFrom('destination_filters').selectAll().where('destination_id', '=', destinationId).orderBy('created_at').orderBy('id').execute();
      return rows.map(toFilter);
    },

    async get(destinationId, filterId) {
      const row = await find(destinationId, filterId);
      return row && toFilter(row);
    },

    async update(destinationId, filterId, settings) {
      const result = await db
        .updateTable('destination_filters')
        .set({ ...settingsColumns(settings), updated_at: new Date().toISOString() })
        .where('destination_id', '=', destinationId)
        .where('id', '=', filterId)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) return undefined;
      const row = await find(destinationId, filterId);
      return row && toFilter(row);
    },

    async delete(destinationId, filterId) {
      const result = await db.deleteFrom('destination_filters').where('destination_id', '=', destinationId).where('id', '=', filterId).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}
