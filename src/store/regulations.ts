import type { Kysely, Selectable } from 'kysely';
import type { Keyring } from '../privacy/keyring';
import { visibleId } from '../privacy/visible-ids';
import { chunks } from './chunks';
import type { ErasedIdHashes } from './erasures';
import { newId } from './ids';
import type { RegulationRow, Tables } from './tables';
import { writeTransaction } from './write-transaction';
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

/**
 * The record of a regulation outlives the users it erased, so it keeps their ids in the form
 * SwitchyardUserId holds them: keyed hashes, which an operator can match against
 * visibility but nobody can read or confirm a guess against without the hash key.
 */
const subjectForm = (keyring: Keyring | undefined, ids: string[]) => ids.map((id) => visibleId(keyring, 'userId', id));

export function regulationStore(db: Kysely<Tables>, keyring: Keyring | undefined): Store['regulations'] {
  return {
    async create(input) {
      const row: RegulationRow = {
        id: newId('reg'),
        regulation_type: input.regulationType,
        subject_type: input.subjectType,
        subject_ids: JSON.stringify(subjectForm(keyring, input.subjectIds)),
        subject_ids_hashed: keyring ? 1 : 0,
        created_at: new Date().toISOString(),
      };
      await db.insertInto('regulations').values(row).execute();
      return toRegulation(row);
    },

    async get(id) {
      const row = await db.selectFrom('regulations').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toRegulation(row);
    },

    async list(limit) {
      const rows = await db.selectFrom('regulations').selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
      return rows.map(toRegulation);
    },
  };
}

/**
 * Hashes the subject ids of regulations recorded before keys existed, and moves those ids' erased-id
 * rows from the unkeyed SHA-256 to the keyed hash (same time). Run by every process with keys when
 * it opens the store; each row is claimed by its `subject_ids_hashed = 0`, so two processes doing it
 * at once write the same thing once. Ids only linked to a subject (anonymousIds, aliases) were never
 * recorded in plaintext, so their SHA-256 rows stay; erasures.ts still looks those up.
 */
export async function hashPlaintextSubjectIds(db: Kysely<Tables>, keyring: Keyring, erasedIdHashes: ErasedIdHashes): Promise<number> {
  const rows = await db.selectFrom('regulations').select(['id', 'subject_ids']).where('subject_ids_hashed', '=', 0).execute();
  let hashed = 0;
  for (const row of rows) {
    const ids = JSON.parse(row.subject_ids) as string[];
    // Reads then writes: waits its turn rather than failing when another process opens the store too.
    await writeTransaction(db, async (trx) => {
      const claimed = await trx
        .updateTable('regulations')
        .set({ subject_ids: JSON.stringify(subjectForm(keyring, ids)), subject_ids_hashed: 1 })
        .where('id', '=', row.id)
        .where('subject_ids_hashed', '=', 0)
        .executeTakeFirst();
      if (Number(claimed.numUpdatedRows) === 0) return;
      hashed++;
      for (const part of chunks(ids, 500)) {
        const forms = part.map((id) => erasedIdHashes(id) as [string, string]);
        const old = await trx.selectFrom('erased_ids').select(['id_hash', 'erased_at']).where('id_hash', 'in', forms.map(([, unkeyed]) => unkeyed)).execute();
        const erasedAt = new Map(old.map((r) => [r.id_hash, r.erased_at]));
        const moved = forms.filter(([, unkeyed]) => erasedAt.has(unkeyed)).map(([keyed, unkeyed]) => ({ id_hash: keyed, erased_at: erasedAt.get(unkeyed)! }));
        if (moved.length === 0) continue;
        // A keyed row there already was written by a regulation since keys exist: a later one, it stays.
        await trx.insertInto('erased_ids').values(moved).onConflict((oc) => oc.column('id_hash').doNothing()).execute();
        await trx.deleteFrom('erased_ids').where('id_hash', 'in', [...erasedAt.keys()]).execute();
      }
    });
  }
  return hashed;
}
