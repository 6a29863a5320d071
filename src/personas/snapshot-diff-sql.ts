import { compileAudienceMembers } from './audience-sql';
import { clearedValue, compileComputedTrait } from './computed-trait-sql';
import type { SqlDialect } from '../store/dialect';
import { q, type SqlFragment } from './sql';
import { isDistinct, tempTable } from './sql-dialect';
import type { ComputationKind, ComputedTraitDefinition, Condition } from './types';

/**
 * The Personas diff (seed, Personas rules 3-4): what one sync tells the receivers, as SQL over
 * `personas_snapshots` (what they were last told) and the values computed now. The store runs these
 * statements in this order, inside its own transactions (store/personas-snapshots.ts):
 *
 *   prepare  stageComputedValues fills the TEMP table `personas_computed` (outside the write lock),
 *            then insertJoinedOrChanged and insertLeft freeze version N's changes in `personas_changes`
 *   commit   dropClearedSnapshots and upsertSnapshots make version N the snapshot
 *
 * A profile counts only while its row is in `profiles`: a deleted or merged-away profile that had a
 * value is told it left, and a computed value for a profile with no row is never sent.
 */

/** One audience or computed trait as stored: its source and the JSON text of its definition. */
export interface ComputationState {
  kind: ComputationKind;
  sourceId: string;
  definition: string;
}

/**
 * A connection's own staging table for the values computed now; TEMP, so other connections never
 * see it (both dialects keep it for the session: the store pins one connection around a prepare).
 */
export const createComputedTable: SqlFragment = q`CREATE TEMP TABLE IF NOT EXISTS personas_computed (profile_id TEXT PRIMARY KEY, value TEXT NOT NULL)`;

/** The staging table by its schema-qualified name, so no ordinary table of that name could be meant. */
export const computedTable = (dialect: SqlDialect) => tempTable(dialect, 'personas_computed');

export const clearComputedTable = (dialect: SqlDialect): SqlFragment => q`DELETE FROM ${computedTable(dialect)}`;

/** Who is in the audience / has which value right now, as rows of (profile_id, value JSON). */
export function computedValues(dialect: SqlDialect, state: ComputationState, nowMs: number): SqlFragment {
  return state.kind === 'audience'
    ? compileAudienceMembers(dialect, state.sourceId, JSON.parse(state.definition) as Condition, nowMs)
    : compileComputedTrait(dialect, state.sourceId, JSON.parse(state.definition) as ComputedTraitDefinition, nowMs);
}

/** Fills `personas_computed` with the values computed now: the heavy query of a sync. */
export function stageComputedValues(dialect: SqlDialect, state: ComputationState, nowMs: number): SqlFragment {
  return q`INSERT INTO ${computedTable(dialect)} (profile_id, value) ${computedValues(dialect, state, nowMs)}`;
}

/** What a profile that left is told: an audience's `false`, a computed trait's empty value. */
export function leftValue(state: ComputationState): string {
  return state.kind === 'audience' ? 'false' : clearedValue(JSON.parse(state.definition) as ComputedTraitDefinition);
}

/**
 * Version `version`'s changes for profiles that joined or whose value changed: a computed value
 * with no snapshot row, or a different one (a missing snapshot compares as a change). The version is
 * cast: PostgreSQL types a bare parameter in a SELECT list as text.
 */
export function insertJoinedOrChanged(dialect: SqlDialect, computationId: string, version: number, sourceId: string): SqlFragment {
  return q`
    INSERT INTO personas_changes (computation_id, version, profile_id, source_id, user_id, value, cleared)
    SELECT ${computationId}, CAST(${version} AS INTEGER), c.profile_id, p.source_id, p.user_id, c.value, 0
    FROM ${computedTable(dialect)} AS c
    JOIN profiles AS p ON p.source_id = ${sourceId} AND p.profile_id = c.profile_id
    LEFT JOIN personas_snapshots AS s ON s.computation_id = ${computationId} AND s.profile_id = c.profile_id
    WHERE ${isDistinct(dialect, q`s.value`, q`c.value`)}`;
}

/**
 * Version `version`'s changes for profiles that left: a snapshot row with no computed value (or
 * whose profile row is gone), told `leftValue` and marked cleared so commit drops its snapshot row.
 */
export function insertLeft(dialect: SqlDialect, computationId: string, version: number, value: string): SqlFragment {
  return q`
    INSERT INTO personas_changes (computation_id, version, profile_id, source_id, user_id, value, cleared)
    SELECT ${computationId}, CAST(${version} AS INTEGER), s.profile_id, s.source_id, s.user_id, ${value}, 1
    FROM personas_snapshots AS s
    WHERE s.computation_id = ${computationId} AND NOT EXISTS (
      SELECT 1 FROM ${computedTable(dialect)} AS c JOIN profiles AS p ON p.source_id = s.source_id AND p.profile_id = c.profile_id
      WHERE c.profile_id = s.profile_id)`;
}

/** Commit, first half: profiles that left are no longer in the snapshot. */
export function dropClearedSnapshots(computationId: string, version: number): SqlFragment {
  return q`
    DELETE FROM personas_snapshots WHERE computation_id = ${computationId} AND profile_id IN (
      SELECT profile_id FROM personas_changes WHERE computation_id = ${computationId} AND version = ${version} AND cleared = 1)`;
}

/** Commit, second half: profiles that joined or changed hold the value they were sent. */
export function upsertSnapshots(computationId: string, version: number): SqlFragment {
  return q`
    INSERT INTO personas_snapshots (computation_id, profile_id, source_id, user_id, value)
    SELECT computation_id, profile_id, source_id, user_id, value FROM personas_changes
    WHERE computation_id = ${computationId} AND version = ${version} AND cleared = 0
    ON CONFLICT (computation_id, profile_id) DO UPDATE SET value = excluded.value, user_id = excluded.user_id`;
}
