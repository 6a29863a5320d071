import { CompiledQuery, type Kysely, type Selectable } from 'kysely';
import {
  clearComputedTable,
  createComputedTable,
  dropClearedSnapshots,
  insertJoinedOrChanged,
  insertLeft,
  leftValue,
  stageComputedValues,
  upsertSnapshots,
  type ComputationState,
} from '../personas/snapshot-diff-sql';
import type { SqlFragment } from '../personas/sql';
import type { ComputationRef } from '../personas/types';
import { COMPUTATION_TABLES } from './computations';
import type { ComputationRow, PersonasTables } from './personas-tables';
import type { PersonasSyncStore, PreparedSync } from './personas-types';
import type { Tables } from './tables';
import { writeTransaction } from './write-transaction';

/**
 * Snapshot versions of audiences and computed traits: runs the Personas diff
 * (personas/snapshot-diff-sql.ts) inside this store's transactions and keeps each computation's
 * pending and last version.
 */

type Db = Kysely<Tables & PersonasTables>;

const run = <DB>(conn: Kysely<DB>, statement: SqlFragment) => conn.executeQuery(CompiledQuery.raw(statement.sql, statement.params));

const stateOf = (ref: ComputationRef, row: Selectable<ComputationRow>): ComputationState => ({ kind: ref.kind, sourceId: row.source_id, definition: row.definition });

const ready = (row: Selectable<ComputationRow>, reused: boolean): PreparedSync => ({
  status: 'ready',
  sourceId: row.source_id,
  key: row.key,
  version: row.pending_version!,
  computedAt: row.pending_at!,
  changes: row.pending_changes ?? 0,
  reused,
});

export function personasSyncStore(base: Kysely<Tables>): PersonasSyncStore {
  const db: Db = base.withTables<PersonasTables>();
  const load = (conn: Db, ref: ComputationRef) => conn.selectFrom(COMPUTATION_TABLES[ref.kind]).selectAll().where('id', '=', ref.id).executeTakeFirst();

  return {
    async prepare(ref, nowMs) {
      const current = await load(db, ref);
      if (!current) return { status: 'gone' };
      // A version computed by an earlier run that never committed is finished, not recomputed:
      // recomputing would give the same message ids different contents.
      if (current.pending_version !== null) return ready(current, true);

      const staged = stageComputedValues(stateOf(ref, current), nowMs);
      return db.connection().execute(async (conn) => {
        // The heavy query fills a TEMP table outside the write lock, so ingestion keeps writing
        // while a large audience is evaluated; only the diff below holds the lock.
        await run(conn, createComputedTable);
        await run(conn, clearComputedTable);
        try {
          await run(conn, staged);
          return await writeTransaction(conn, async (trx) => {
            const state = await load(trx, ref);
            if (!state) return { status: 'gone' } as const;
            if (state.pending_version !== null) return ready(state, true);
            const version = state.last_version + 1;
            const computedAt = new Date(nowMs).toISOString();
            await run(trx, insertJoinedOrChanged(ref.id, version, state.source_id));
            await run(trx, insertLeft(ref.id, version, leftValue(stateOf(ref, state))));
            const { changes } = await trx
              .selectFrom('personas_changes')
              .select((eb) => eb.fn.countAll<number>().as('changes'))
              .where('computation_id', '=', ref.id)
              .where('version', '=', version)
              .executeTakeFirstOrThrow();
            const updated = await trx
              .updateTable(COMPUTATION_TABLES[ref.kind])
              .set({ pending_version: version, pending_at: computedAt, pending_changes: Number(changes) })
              .where('id', '=', ref.id)
              .returningAll()
              .executeTakeFirstOrThrow();
            return ready(updated, false);
          });
        } finally {
          await run(conn, clearComputedTable);
        }
      });
    },

    async changes(ref, version, after, limit) {
      // One read transaction: the version check and the page come from the same snapshot of the file.
      return db.transaction().execute(async (trx) => {
        const state = await load(trx, ref);
        if (!state) return { status: 'gone' } as const;
        if (state.pending_version !== version) return { status: 'superseded' } as const;
        let query = trx
          .selectFrom('personas_changes')
          .select(['profile_id', 'user_id', 'value'])
          .where('computation_id', '=', ref.id)
          .where('version', '=', version)
          .orderBy('profile_id')
          .limit(limit);
        if (after !== undefined) query = query.where('profile_id', '>', after);
        const rows = await query.execute();
        return {
          status: 'pending',
          sourceId: state.source_id,
          key: state.key,
          computedAt: state.pending_at!,
          changes: rows.map((r) => ({ profileId: r.profile_id, userId: r.user_id, value: r.value })),
        } as const;
      });
    },

    async commit(ref, version) {
      return writeTransaction(db, async (trx) => {
        const state = await load(trx, ref);
        if (!state) return 'gone';
        if (state.last_version >= version) return 'already_committed';
        if (state.pending_version !== version) return 'superseded';
        await run(trx, dropClearedSnapshots(ref.id, version));
        await run(trx, upsertSnapshots(ref.id, version));
        await trx.deleteFrom('personas_changes').where('computation_id', '=', ref.id).where('version', '<=', version).execute();
        await trx
          .updateTable(COMPUTATION_TABLES[ref.kind])
          .set({ last_version: version, last_synced_at: state.pending_at, pending_version: null, pending_at: null, pending_changes: null })
          .where('id', '=', ref.id)
          .execute();
        return 'committed';
      });
    },
  };
}
