import { CompiledQuery, sql, type Kysely, type Selectable } from 'kysely';
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
import { raw, sqlText, type SqlFragment } from '../personas/sql';
import { binaryText } from '../personas/sql-dialect';
import type { ComputationRef } from '../personas/types';
import { COMPUTATION_TABLES } from './computations';
import type { ComputationRow, PersonasTables } from './personas-tables';
import { dialectOf } from './dialect';
import type { PersonasSyncStore, PreparedSync } from './personas-types';
import type { Tables } from './tables';
import { writeTransaction } from './write-transaction';

/**
 * Snapshot versions of audiences and computed traits: runs the Personas diff
 * (personas/snapshot-diff-sql.ts) inside this store's transactions and keeps each computation's
 * pending and last version.
 */

type Db = Kysely<Tables & PersonasTables>;

const run = <DB>(conn: Kysely<DB>, statement: SqlFragment) => conn.executeQuery(CompiledQuery.raw(sqlText(statement, dialectOf(conn)), statement.params));

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
  const dialect = dialectOf(db);
  // Pages follow profile ids in byte order on both dialects (PostgreSQL's default collation may not be).
  const profileId = sql.raw(binaryText(dialect, raw('personas_changes.profile_id')).sql);
  const load = (conn: Db, ref: ComputationRef) => conn.selectFrom(COMPUTATION_TABLES[ref.kind]).selectAll().where('id', '=', ref.id).executeTakeFirst();

  return {
    async prepare(ref, nowMs) {
      const current = await load(db, ref);
      if (!current) return { status: 'gone' };
      // A version computed by an earlier run that never committed is finished, not recomputed:
      // recomputing would give the same message ids different contents.
      if (current.pending_version !== null) return ready(current, true);

      const staged = stageComputedValues(dialect, stateOf(ref, current), nowMs);
      return db.connection().execute(async (conn) => {
        // The heavy query fills a TEMP table outside the write lock, so ingestion keeps writing
        // while a large audience is evaluated; only the diff below holds the lock.
        await run(conn, createComputedTable);
        await run(conn, clearComputedTable(dialect));
        try {
          await run(conn, staged);
          return await writeTransaction(conn, async (trx) => {
            const state = await load(trx, ref);
            if (!state) return { status: 'gone' } as const;
            if (state.pending_version !== null) return ready(state, true);
            const version = state.last_version + 1;
            const computedAt = new Date(nowMs).toISOString();
            await run(trx, insertJoinedOrChanged(dialect, ref.id, version, state.source_id));
            await run(trx, insertLeft(dialect, ref.id, version, leftValue(stateOf(ref, state))));
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
          await run(conn, clearComputedTable(dialect));
        }
      });
    },

    async changes(ref, version, from, limit) {
      // One read transaction: the version check and the page come from the same snapshot (SQLite's
      // read transaction is one; PostgreSQL's READ COMMITTED would take one per statement).
      return db.transaction().setIsolationLevel('repeatable read').execute(async (trx) => {
        const state = await load(trx, ref);
        if (!state) return { status: 'gone' } as const;
        if (state.pending_version !== version) return { status: 'superseded' } as const;
        // The profile's consent as it is now, not as it was when the version froze: a sync sends
        // nothing a user has since refused (one merged into another since has no row: no preferences known).
        let query = trx
          .selectFrom('personas_changes')
          .leftJoin('profiles', (join) => join.onRef('profiles.source_id', '=', 'personas_changes.source_id').onRef('profiles.profile_id', '=', 'personas_changes.profile_id'))
          .select(['personas_changes.profile_id', 'personas_changes.user_id', 'personas_changes.value', 'profiles.consent'])
          .where('personas_changes.computation_id', '=', ref.id)
          .where('personas_changes.version', '=', version)
          .orderBy(profileId)
          .limit(limit);
        if ('afterProfileId' in from) query = query.where(profileId, '>', from.afterProfileId);
        if ('position' in from && from.position > 0) query = query.offset(from.position);
        const rows = await query.execute();
        return {
          status: 'pending',
          sourceId: state.source_id,
          key: state.key,
          computedAt: state.pending_at!,
          changes: rows.map((r) => ({ profileId: r.profile_id, userId: r.user_id, value: r.value, consent: r.consent })),
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
