import type { Kysely, Selectable } from 'kysely';
import { newId } from './ids';
import type { RegulationRow, Tables } from './tables';
import type { Regulation, Store } from './types';

function toRegulation(row: Selectable<RegulationRow>): Regulation {
  return {
    id: row.id,
    regulationType: row.regulation_type as Regulation['regulationType'],
    subjectType: row.subject_type as Regulation['subjectType'],
    subjectIds: JSON.parse(row.subject_ids) as string[],
    createdAt: row.created_at,
  };
}

export function regulationStore(db: Kysely<Tables>): Store['regulations'] {
  return {
    async create(input) {
      const row: RegulationRow = {
        id: newId('reg'),
        regulation_type: input.regulationType,
        subject_type: input.subjectType,
        subject_ids: JSON.stringify(input.subjectIds),
        created_at: new Date().toISOString(),
      };
      await db.insertInto('regulations').values(row).execute();
      return toRegulation(row);
    },

    async get(id) {
      const row = await db.selectFrom('regulations').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toRegulation(row);
    },
  };
}
