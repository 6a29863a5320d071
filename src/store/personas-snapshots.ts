import { CompiledQuery, sql, type Kysely, type Selectable } from 'kysely';
import { compileAudienceMembers } from '../personas/audience-sql';
import { clearedValue, compileComputedTrait } from '../personas/computed-trait-sql';
import type { SqlFragment } from '../personas/sql';
import type { ComputationRef, ComputedTraitDefinition, Condition } from '../personas/types';
import { COMPUTATION_TABLES } from './computations';
import type { ComputationRow, PersonasTables } from './personas-tables';
import type { PersonasSyncStore, PreparedSync } from './personas-types';
import type { Tables } from './tables';
import { writeTransaction } from './write-transaction';

type Db = Kysely<Tables & PersonasTables>;

/** Who is in the audience / has which value right now, as rows of (profile_id, value JSON). */
function currentValues(ref: ComputationRef, row: Selectable<ComputationRow>, nowMs: number): SqlFragment {
  return ref.kind === 'audience'
    ? compileAudienceMembers(row.source_id, JSON.parse(row.definition) as Condition, nowMs)
    : compileComputedTrait(row.source_id, JSON.parse(row.definition) as ComputedTraitDefinition, nowMs);
}

/** What a profile that left is told: an audience's `false`, a computed trait's empty value. */
function leftValue(ref: ComputationRef, row: Selectable<ComputationRow>): string {
  return ref.kind === 'audience' ? 'false' : clearedValue(JSON.parse(row.definition) as ComputedTraitDefinition);
}

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

      const values = currentValues(ref, current, nowMs);
      return db.connection().execute(async (conn) => {
        // The heavy query fills a TEMP table outside the write lock, so ingestion keeps writing
        // while a large audience is evaluated; only the diff below holds the lock.
        await sql`CREATE TEMP TABLE IF NOT EXISTS personas_computed (profile_id TEXT PRIMARY KEY, value TEXT NOT NULL)`.execute(conn);
        await sql`DELETE FROM temp.personas_computed`.execute(conn);
        try {
          await conn.executeQuery(CompiledQuery.raw(`INSERT INTO temp.personas_computed (profile_id, value) ${values.sql}`, values.params));
          return await writeTransaction(conn, async (trx) => {
            const state = await load(trx, ref);
            if (!state) return { status: 'gone' } as const;
            if (state.pending_version !== null) return ready(state, true);
            const version = state.last_version + 1;
            const computedAt = new Date(nowMs).toISOString();
            await sql`
              INSERT INTO personas_changes (computation_id, version, profile_id, source_id, user_id, value, cleared)
              SELECT ${ref.id}, ${version}, c.profile_id, p.source_id, p.user_id, c.value, 0
              FROM temp.personas_computed AS c
              JOIN profiles AS p ON p.source_id = ${state.source_id} AND p.profile_id = c.profile_id
              LEFT JOIN personas_snapshots AS s ON s.computation_id = ${ref.id} AND s.profile_id = c.profile_id
              WHERE s.value IS NOT c.value`.execute(trx);
            await sql`
              INSERT INTO personas_changes (computation_id, version, profile_id, source_id, user_id, value, cleared)
              SELECT ${ref.id}, ${version}, s.profile_id, s.source_id, s.user_id, ${leftValue(ref, state)}, 1
              FROM personas_snapshots AS s
              WHERE s.computation_id = ${ref.id} AND NOT EXISTS (
                SELECT 1 FROM temp.personas_computed AS c JOIN profiles AS p ON p.source_id = s.source_id AND p.profile_id = c.profile_id
                WHERE c.profile_id = s.profile_id)`.execute(trx);
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
          await sql`DELETE FROM temp.personas_computed`.execute(conn);
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
        await sql`
          DELETE FROM personas_snapshots WHERE computation_id = ${ref.id} AND profile_id IN (
            SELECT profile_id FROM personas_changes WHERE computation_id = ${ref.id} AND version = ${version} AND cleared = 1)`.execute(trx);
        await sql`
          INSERT INTO personas_snapshots (computation_id, profile_id, source_id, user_id, value)
          SELECT computation_id, profile_id, source_id, user_id, value FROM personas_changes
          WHERE computation_id = ${ref.id} AND version = ${version} AND cleared = 0
          ON CONFLICT (computation_id, profile_id) DO UPDATE SET value = excluded.value, user_id = excluded.user_id`.execute(trx);
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
