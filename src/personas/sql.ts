/**
 * A tiny SQL builder for the Personas compilers: text with `?` placeholders and its parameters in
 * the same order. Pure data, so the compilers stay unit-testable and the store runs the result with
 * Kysely's CompiledQuery. The SQL is SQLite's (JSON1 functions, `->`, window functions).
 */
export interface SqlFragment {
  sql: string;
  params: (string | number)[];
}

export type SqlPart = SqlFragment | string | number;

const isFragment = (value: SqlPart): value is SqlFragment => typeof value === 'object';

/** `q\`a = ${1} AND ${other}\``: primitives become parameters, fragments are spliced in place. */
export function q(strings: TemplateStringsArray, ...values: SqlPart[]): SqlFragment {
  let text = strings[0];
  const params: (string | number)[] = [];
  values.forEach((value, i) => {
    if (isFragment(value)) {
      text += value.sql;
      params.push(...value.params);
    } else {
      text += '?';
      params.push(value);
    }
    text += strings[i + 1];
  });
  return { sql: text, params };
}

/** Trusted SQL text (an operator, a column name chosen by the compiler): never user input. */
export const raw = (sql: string): SqlFragment => ({ sql, params: [] });

export function join(parts: SqlFragment[], separator: string): SqlFragment {
  return { sql: parts.map((p) => p.sql).join(separator), params: parts.flatMap((p) => p.params) };
}

/**
 * The SQLite JSON path of one top-level key. The key is quoted (so "a.b" or "First Name" are one
 * key, not a path) with JSON string escaping, which SQLite's path parser understands.
 */
export const jsonKeyPath = (key: string) => `$.${JSON.stringify(key)}`;
