import { sql, type Kysely, type Selectable, type Updateable } from 'kysely';
import { raw } from '../personas/sql';
import { binaryText } from '../personas/sql-dialect';
import type { ComputationKind } from '../personas/types';
import { dialectOf } from './dialect';
import { newId } from './ids';
import type { ComputationRow, PersonasTables } from './personas-tables';
import type { Computation, ComputationStore } from './personas-types';
import type { Tables } from './tables';
import { writeTransaction } from './write-transaction';

type Db = Kysely<Tables & PersonasTables>;

/** Audiences and computed traits are stored alike: a definition, its schedule and its sync state. */
export const COMPUTATION_TABLES = { audience: 'audiences', computed_trait: 'computed_traits' } as const;
const ID_PREFIXES = { audience: 'aud', computed_trait: 'ctr' } as const;

export function toComputation<D>(kind: ComputationKind, row: Selectable<ComputationRow>): Computation<D> {
  return {
    id: row.id,
    kind,
    sourceId: row.source_id,
    name: row.name,
    key: row.key,
    definition: JSON.parse(row.definition) as D,
    schedule: row.schedule,
    paused: row.paused === 1,
    lastSync: row.last_synced_at === null ? null : { version: row.last_version, syncedAt: row.last_synced_at },
    pending: row.pending_version === null ? null : { version: row.pending_version, computedAt: row.pending_at!, changes: row.pending_changes ?? 0 },
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function computationStore<D>(base: Kysely<Tables>, kind: ComputationKind): ComputationStore<D> {
  const db: Db = base.withTables<PersonasTables>();
  const table = COMPUTATION_TABLES[kind];
  const toRecord = (row: Selectable<ComputationRow>) => toComputation<D>(kind, row);
  // Listed in byte order on both dialects (PostgreSQL's default collation may not be).
  const byteOrder = (column: string) => sql.raw(binaryText(dialectOf(db), raw(column)).sql);

  return {
    async create(sourceId, input) {
      const now = new Date().toISOString();
      const row: ComputationRow = {
        id: newId(ID_PREFIXES[kind]),
        source_id: sourceId,
        name: input.name,
        key: input.key,
        definition: JSON.stringify(input.definition),
        schedule: input.schedule,
        paused: input.paused ? 1 : 0,
        created_at: now,
        updated_at: now,
        last_version: 0,
        last_synced_at: null,
        pending_version: null,
        pending_at: null,
        pending_changes: null,
      };
      await db.insertInto(table).values(row).execute();
      return toRecord(row);
    },

    async get(id) {
      const row = await db.selectFrom(table).selectAll().where('id', '=', id).executeTakeFirst();
      return row && toRecord(row);
    },

    async listBySource(sourceId) {
      const rows = await db.selectFrom(table).selectAll().where('source_id', '=', sourceId).orderBy(byteOrder('created_at')).orderBy(byteOrder('id')).execute();
      return rows.map(toRecord);
    },

    async update(id, patch) {
      const changes: Updateable<ComputationRow> = { updated_at: new Date().toISOString() };
      if (patch.name !== undefined) changes.name = patch.name;
      if (patch.key !== undefined) changes.key = patch.key;
      if (patch.definition !== undefined) changes.definition = JSON.stringify(patch.definition);
      if (patch.schedule !== undefined) changes.schedule = patch.schedule;
      if (patch.paused !== undefined) changes.paused = patch.paused ? 1 : 0;
      const row = await db.updateTable(table).set(changes).where('id', '=', id).returningAll().executeTakeFirst();
      return row && toRecord(row);
    },

    async delete(id) {
      return writeTransaction(db, async (trx) => {
        const result = await trx.deleteFrom(table).where('id', '=', id).executeTakeFirst();
        await trx.deleteFrom('personas_snapshots').where('computation_id', '=', id).execute();
        await trx.deleteFrom('personas_changes').where('computation_id', '=', id).execute();
        return result.numDeletedRows > 0n;
      });
    },
  };
}
