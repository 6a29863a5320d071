import type { SqlDialect } from '../store/dialect';
import { q, raw, type SqlFragment } from './sql';
import type { Scalar } from './types';

/**
 * Every place the Personas SQL differs between SQLite and PostgreSQL, one function per concept.
 * The builders (audience-sql, computed-trait-sql, snapshot-diff-sql) say what they need ("the
 * number at this key", "this array holds that value") and get the dialect's text here, so both
 * dialects select the same rows and the same JSON text.
 *
 * JSON is stored as text on both. SQLite reads it with its JSON1 functions and a path
 * (`json_type(col, '$."key"')`, `json_extract`, `->`, `json_each`). PostgreSQL casts it to `json`,
 * not `jsonb`: `json` keeps the text as written, so `->` returns exactly the substring SQLite's `->`
 * returns (`jsonb` would reorder object keys and add spaces, and a computed value sent as
 * `{"b":1,"a":2}` on one dialect would be `{"a": 2, "b": 1}` on the other). The key is a parameter
 * (`-> $1::text`): one key, never a path, as SQLite's quoted path makes it.
 *
 * Text compares byte by byte on both (SQLite's BINARY; `COLLATE "C"` on PostgreSQL, whose database
 * default may be a language collation where 'a' < 'B'). Casts to numeric sit inside CASE: PostgreSQL
 * does not promise to evaluate `type = 'number' AND x::numeric > 5` left to right, and the cast of a
 * string would fail the whole query.
 */

/** The JSON types a condition tells apart ("50" as text is not the number 50). */
export type JsonKind = 'number' | 'string' | 'array' | 'true' | 'false' | 'present';

const SQLITE_KINDS: Record<JsonKind, string> = {
  number: "IN ('integer', 'real')",
  string: "= 'text'",
  array: "= 'array'",
  true: "= 'true'",
  false: "= 'false'",
  present: "!= 'null'",
};

/** SQLite's JSON path of one top-level key, quoted with JSON escaping so "a.b" or "First Name" stay one key. */
const sqlitePath = (key: string) => `$.${JSON.stringify(key)}`;

/** PostgreSQL: the value at `key` as `json` (NULL when the key is missing). */
const pgValue = (column: SqlFragment, key: string) => q`((${column})::json -> ${key}::text)`;

const pgKind = (value: SqlFragment, kind: JsonKind): SqlFragment => {
  switch (kind) {
    case 'number':
      return q`json_typeof(${value}) = 'number'`;
    case 'string':
      return q`json_typeof(${value}) = 'string'`;
    case 'array':
      return q`json_typeof(${value}) = 'array'`;
    case 'true':
    case 'false':
      return q`(json_typeof(${value}) = 'boolean' AND (${value} #>> '{}') = ${raw(`'${kind}'`)})`;
    case 'present':
      return q`json_typeof(${value}) != 'null'`;
  }
};

/** Whether the value at `key` is of `kind`: NULL (unknown) when the key is missing, on both. */
export function jsonIs(dialect: SqlDialect, column: SqlFragment, key: string, kind: JsonKind): SqlFragment {
  if (dialect === 'sqlite') return q`json_type(${column}, ${sqlitePath(key)}) ${raw(SQLITE_KINDS[kind])}`;
  return pgKind(pgValue(column, key), kind);
}

/** The number at `key`, for arithmetic and comparison; NULL when it is not a JSON number. */
export function jsonNumber(dialect: SqlDialect, column: SqlFragment, key: string): SqlFragment {
  if (dialect === 'sqlite') {
    const path = sqlitePath(key);
    return q`CASE WHEN json_type(${column}, ${path}) IN ('integer', 'real') THEN json_extract(${column}, ${path}) END`;
  }
  const value = pgValue(column, key);
  return q`CASE WHEN json_typeof(${value}) = 'number' THEN (${value} #>> '{}')::numeric END`;
}

/** The string at `key` as text, compared byte by byte; NULL when it is not a JSON string. */
export function jsonString(dialect: SqlDialect, column: SqlFragment, key: string): SqlFragment {
  if (dialect === 'sqlite') {
    const path = sqlitePath(key);
    return q`CASE WHEN json_type(${column}, ${path}) = 'text' THEN json_extract(${column}, ${path}) END`;
  }
  const value = pgValue(column, key);
  return q`(CASE WHEN json_typeof(${value}) = 'string' THEN ${value} #>> '{}' END) COLLATE "C"`;
}

/** The JSON text of the value at `key` (an object's keys in their written order), NULL when missing. */
export function jsonText(dialect: SqlDialect, column: SqlFragment, key: string): SqlFragment {
  if (dialect === 'sqlite') return q`${column} -> ${sqlitePath(key)}`;
  return q`(${pgValue(column, key)})::text`;
}

/** Whether the array at `key` has an element of the same JSON type equal to `value` (1 is not "1" nor true). */
export function jsonArrayHas(dialect: SqlDialect, column: SqlFragment, key: string, value: Scalar): SqlFragment {
  if (dialect === 'sqlite') {
    const element = typeof value === 'number' ? q`j.type IN ('integer', 'real') AND j.value = ${value}` : typeof value === 'boolean' ? q`j.type = ${String(value)}` : q`j.type = 'text' AND j.value = ${value}`;
    return q`EXISTS (SELECT 1 FROM json_each(${column}, ${sqlitePath(key)}) AS j WHERE ${element})`;
  }
  const array = pgValue(column, key);
  const element =
    typeof value === 'number'
      ? q`(CASE WHEN json_typeof(j.value) = 'number' THEN (j.value #>> '{}')::numeric END) = ${value}`
      : typeof value === 'boolean'
        ? pgKind(raw('j.value'), value ? 'true' : 'false')
        : q`json_typeof(j.value) = 'string' AND (j.value #>> '{}') = ${value}`;
  // json_array_elements fails on a non-array, and the caller's type test may run after it: only arrays get in.
  return q`EXISTS (SELECT 1 FROM json_array_elements(CASE WHEN json_typeof(${array}) = 'array' THEN ${array} END) AS j(value) WHERE ${element})`;
}

/** Whether `text` contains `part` (case-sensitive; the empty string is in every text). */
export function textContains(dialect: SqlDialect, text: SqlFragment, part: string): SqlFragment {
  return dialect === 'sqlite' ? q`instr(${text}, ${part}) > 0` : q`strpos(${text}, ${part}) > 0`;
}

/**
 * A numeric aggregate (sum, avg, min, max) as JSON text, non-integers rounded to 6 decimals so a
 * float's last digit never counts as a change. SQLite: an integer stays one, a real is rounded
 * (`json_quote(40.0)` is `40.0`). PostgreSQL sums JSON numbers as exact numeric; trim_scale drops
 * round's trailing zeros (110.000000 is 110). Both parse to the same number.
 */
export function numberAsJson(dialect: SqlDialect, number: string): SqlFragment {
  if (dialect === 'sqlite') return raw(`json_quote(CASE WHEN typeof(${number}) = 'integer' THEN ${number} ELSE round(${number}, 6) END)`);
  return raw(`trim_scale(round(${number}, 6))::text`);
}

/** Text ordered and compared byte by byte, as SQLite's default BINARY collation does. */
export function binaryText(dialect: SqlDialect, expression: SqlFragment): SqlFragment {
  return dialect === 'sqlite' ? expression : q`(${expression}) COLLATE "C"`;
}

/** `a` and `b` differ, a NULL on one side only counting as a difference. */
export function isDistinct(dialect: SqlDialect, a: SqlFragment, b: SqlFragment): SqlFragment {
  return dialect === 'sqlite' ? q`${a} IS NOT ${b}` : q`${a} IS DISTINCT FROM ${b}`;
}

/** A connection's own table: SQLite's `temp` schema, PostgreSQL's `pg_temp`. Both live as long as the session. */
export function tempTable(dialect: SqlDialect, name: string): SqlFragment {
  return raw(dialect === 'sqlite' ? `temp.${name}` : `pg_temp.${name}`);
}
