import type { SqlDialect } from '../store/dialect';
import { q, raw, join, type SqlFragment } from './sql';
import { jsonArrayHas, jsonIs, jsonNumber, jsonString, textContains } from './sql-dialect';
import type { Condition, CountOp, EventCondition, Scalar, TraitOp } from './types';
import { windowStart } from './within';

/**
 * Compiles an audience condition tree into one SQL boolean expression over a profile row `p`
 * (profiles: source_id, profile_id, traits) with correlated subqueries on `profile_events`, so
 * membership of every profile is decided inside the database, by index, without loading profiles
 * into memory. The SQL is the dialect's (sql-dialect.ts); the rows selected are the same on both.
 *
 * Every leaf is wrapped in coalesce(.., false): SQL's NULL ("unknown") would otherwise make
 * {"not": ...} of a missing trait unknown too, and the member lists would disagree with the rules
 * documented in docs/personas.md (a missing trait is simply not equal, not greater, ...).
 */

const COMPARE: Record<Exclude<TraitOp, 'exists' | 'contains' | 'neq'> | CountOp, string> = {
  eq: '=',
  neq: '!=',
  gt: '>',
  gte: '>=',
  lt: '<',
  lte: '<=',
};

const known = (expression: SqlFragment) => q`coalesce((${expression}), false)`;

/** One condition on a key of a JSON object column (profile traits or event properties). */
export function jsonCondition(dialect: SqlDialect, column: SqlFragment, key: string, op: TraitOp, value: Scalar | undefined): SqlFragment {
  switch (op) {
    case 'exists':
      return known(jsonIs(dialect, column, key, 'present'));
    case 'neq':
      return q`NOT ${jsonCondition(dialect, column, key, 'eq', value)}`;
    case 'contains': {
      const v = value as Scalar;
      const inArray = q`(${jsonIs(dialect, column, key, 'array')} AND ${jsonArrayHas(dialect, column, key, v)})`;
      if (typeof v !== 'string') return known(inArray);
      return known(q`(${jsonIs(dialect, column, key, 'string')} AND ${textContains(dialect, jsonString(dialect, column, key), v)}) OR ${inArray}`);
    }
    default: {
      const v = value as Scalar;
      if (typeof v === 'boolean') return known(jsonIs(dialect, column, key, v ? 'true' : 'false'));
      // Typed: "50" (text) never equals 50 (number), and text compares byte by byte.
      const operand = typeof v === 'number' ? jsonNumber(dialect, column, key) : jsonString(dialect, column, key);
      return known(q`${operand} ${raw(COMPARE[op])} ${v}`);
    }
  }
}

function eventCondition(dialect: SqlDialect, condition: EventCondition, nowMs: number): SqlFragment {
  const filters: SqlFragment[] = [q`e.source_id = p.source_id`, q`e.event = ${condition.event}`, q`e.profile_id = p.profile_id`];
  if (condition.within) filters.push(q`e.timestamp >= ${windowStart(condition.within, nowMs)}`);
  for (const w of condition.where ?? []) filters.push(jsonCondition(dialect, raw('e.properties'), w.property, w.op, w.value));
  const events = q`FROM profile_events AS e WHERE ${join(filters, ' AND ')}`;
  const { op, value } = condition.count ?? { op: 'gte', value: 1 };
  // "did it at least once" / "never did it" are the common cases: EXISTS stops at the first row.
  if ((op === 'gte' && value === 1) || (op === 'gt' && value === 0)) return q`EXISTS (SELECT 1 ${events})`;
  if ((op === 'eq' && value === 0) || (op === 'lt' && value === 1) || (op === 'lte' && value === 0)) return q`NOT EXISTS (SELECT 1 ${events})`;
  return q`(SELECT count(*) ${events}) ${raw(COMPARE[op])} ${value}`;
}

/** The condition as a boolean SQL expression over profile row `p`; windows end at `nowMs`. */
export function compileCondition(dialect: SqlDialect, condition: Condition, nowMs: number): SqlFragment {
  if ('trait' in condition) return jsonCondition(dialect, raw('p.traits'), condition.trait, condition.op, condition.value);
  if ('event' in condition) return eventCondition(dialect, condition, nowMs);
  if ('all' in condition) return q`(${join(condition.all.map((c) => compileCondition(dialect, c, nowMs)), ' AND ')})`;
  if ('any' in condition) return q`(${join(condition.any.map((c) => compileCondition(dialect, c, nowMs)), ' OR ')})`;
  return q`(NOT ${compileCondition(dialect, condition.not, nowMs)})`;
}

/** Members of the audience in one source: rows of (profile_id, value), value the JSON `true`. */
export function compileAudienceMembers(dialect: SqlDialect, sourceId: string, condition: Condition, nowMs: number): SqlFragment {
  return q`SELECT p.profile_id AS profile_id, 'true' AS value FROM profiles AS p WHERE p.source_id = ${sourceId} AND ${compileCondition(dialect, condition, nowMs)}`;
}
