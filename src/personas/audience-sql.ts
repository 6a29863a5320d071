import { q, raw, join, jsonKeyPath, type SqlFragment } from './sql';
import type { Condition, CountOp, EventCondition, Scalar, TraitOp } from './types';
import { windowStart } from './within';

/**
 * Compiles an audience condition tree into one SQL boolean expression over a profile row `p`
 * (profiles: source_id, profile_id, traits) with correlated subqueries on `profile_events`, so
 * membership of every profile is decided inside SQLite, by index, without loading profiles into
 * memory.
 *
 * Every leaf is wrapped in coalesce(.., 0): SQL's NULL ("unknown") would otherwise make
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

const known = (expression: SqlFragment) => q`coalesce((${expression}), 0)`;

/** The JSON type test that makes a comparison typed: "50" (text) never equals 50 (number). */
function typed(column: SqlFragment, path: string, value: Scalar): SqlFragment {
  if (typeof value === 'number') return q`json_type(${column}, ${path}) IN ('integer', 'real')`;
  return q`json_type(${column}, ${path}) = 'text'`;
}

/** One condition on a key of a JSON object column (profile traits or event properties). */
export function jsonCondition(column: SqlFragment, key: string, op: TraitOp, value: Scalar | undefined): SqlFragment {
  const path = jsonKeyPath(key);
  switch (op) {
    case 'exists':
      return known(q`json_type(${column}, ${path}) != 'null'`);
    case 'neq':
      return q`NOT ${jsonCondition(column, key, 'eq', value)}`;
    case 'contains': {
      const v = value as Scalar;
      const element = typeof v === 'number' ? q`j.type IN ('integer', 'real') AND j.value = ${v}` : typeof v === 'boolean' ? q`j.type = ${String(v)}` : q`j.type = 'text' AND j.value = ${v}`;
      const inArray = q`(json_type(${column}, ${path}) = 'array' AND EXISTS (SELECT 1 FROM json_each(${column}, ${path}) AS j WHERE ${element}))`;
      if (typeof v !== 'string') return known(inArray);
      return known(q`(json_type(${column}, ${path}) = 'text' AND instr(json_extract(${column}, ${path}), ${v}) > 0) OR ${inArray}`);
    }
    default: {
      const v = value as Scalar;
      if (typeof v === 'boolean') return known(q`json_type(${column}, ${path}) = ${String(v)}`);
      return known(q`${typed(column, path, v)} AND json_extract(${column}, ${path}) ${raw(COMPARE[op])} ${v}`);
    }
  }
}

function eventCondition(condition: EventCondition, nowMs: number): SqlFragment {
  const filters: SqlFragment[] = [q`e.source_id = p.source_id`, q`e.event = ${condition.event}`, q`e.profile_id = p.profile_id`];
  if (condition.within) filters.push(q`e.timestamp >= ${windowStart(condition.within, nowMs)}`);
  for (const w of condition.where ?? []) filters.push(jsonCondition(raw('e.properties'), w.property, w.op, w.value));
  const events = q`FROM profile_events AS e WHERE ${join(filters, ' AND ')}`;
  const { op, value } = condition.count ?? { op: 'gte', value: 1 };
  // "did it at least once" / "never did it" are the common cases: EXISTS stops at the first row.
  if ((op === 'gte' && value === 1) || (op === 'gt' && value === 0)) return q`EXISTS (SELECT 1 ${events})`;
  if ((op === 'eq' && value === 0) || (op === 'lt' && value === 1) || (op === 'lte' && value === 0)) return q`NOT EXISTS (SELECT 1 ${events})`;
  return q`(SELECT count(*) ${events}) ${raw(COMPARE[op])} ${value}`;
}

/** The condition as a boolean SQL expression over profile row `p`; windows end at `nowMs`. */
export function compileCondition(condition: Condition, nowMs: number): SqlFragment {
  if ('trait' in condition) return jsonCondition(raw('p.traits'), condition.trait, condition.op, condition.value);
  if ('event' in condition) return eventCondition(condition, nowMs);
  if ('all' in condition) return q`(${join(condition.all.map((c) => compileCondition(c, nowMs)), ' AND ')})`;
  if ('any' in condition) return q`(${join(condition.any.map((c) => compileCondition(c, nowMs)), ' OR ')})`;
  return q`(NOT ${compileCondition(condition.not, nowMs)})`;
}

/** Members of the audience in one source: rows of (profile_id, value), value the JSON `true`. */
export function compileAudienceMembers(sourceId: string, condition: Condition, nowMs: number): SqlFragment {
  return q`SELECT p.profile_id AS profile_id, 'true' AS value FROM profiles AS p WHERE p.source_id = ${sourceId} AND ${compileCondition(condition, nowMs)}`;
}
