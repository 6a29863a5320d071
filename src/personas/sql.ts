import type { SqlDialect } from '../store/dialect';

/**
 * A tiny SQL builder for the Personas compilers: text with `?` placeholders and its parameters in
 * the same order. Pure data, so the compilers stay unit-testable and the store runs the result with
 * Kysely's CompiledQuery (`sqlText` numbers the placeholders for PostgreSQL). What differs between
 * SQLite and PostgreSQL (JSON functions, collation, TEMP tables) lives in sql-dialect.ts.
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
 * The statement's text for `dialect`: SQLite takes `?`, PostgreSQL (pg) numbered `$1, $2, ...`.
 * The builders never write a `?` of their own (no jsonb `?` operator, values are parameters), so
 * every `?` is a placeholder.
 */
export function sqlText(fragment: SqlFragment, dialect: SqlDialect): string {
  if (dialect === 'sqlite') return fragment.sql;
  let n = 0;
  const text = fragment.sql.replace(/\?/g, () => `$${++n}`);
  if (n !== fragment.params.length) throw new Error(`SQL has ${n} placeholders for ${fragment.params.length} parameters`);
  return text;
}
