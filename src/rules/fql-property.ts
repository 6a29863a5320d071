import { lexFql, type FqlToken } from './fql-lexer';
import { pathRule } from './safe-path';

/**
 * The FQL a transformation's `fqlDefinedProperties[].fql` is written in: one case function of a
 * field or a quoted string, `lowercase(properties.city)`, `titlecase("united states")`. A closed
 * vocabulary (the five functions Segment's Public API names, nothing else) with a cost of one
 * string conversion per message; compiled once at save (programs/compile-program.ts).
 */

export const CASE_FUNCTIONS = ['lowercase', 'uppercase', 'snakecase', 'kebabcase', 'titlecase'] as const;
export type CaseFunction = (typeof CASE_FUNCTIONS)[number];

export interface FqlProperty {
  fn: CaseFunction;
  /** A field of the message (one name per segment), or a literal string. */
  arg: { path: string[] } | { literal: string };
}

export type FqlPropertyResult = { ok: true; property: FqlProperty } | { ok: false; column: number; rule: string };

const describe = (token: FqlToken) => (token.kind === 'end' ? 'the end' : token.kind === 'string' ? 'a string' : token.kind === 'number' ? `${token.value}` : `"${token.text}"`);

export function parseFqlProperty(source: string): FqlPropertyResult {
  const lexed = lexFql(source);
  if (!lexed.ok) return { ok: false, column: lexed.error.column, rule: lexed.error.message };
  const tokens = lexed.tokens;
  let at = 0;
  const fail = (token: FqlToken, rule: string): FqlPropertyResult => ({ ok: false, column: token.column, rule });
  const fn = tokens[at++];
  if (fn.kind !== 'ident' || !(CASE_FUNCTIONS as readonly string[]).includes(fn.text)) return fail(fn, `expected one of ${CASE_FUNCTIONS.join(', ')}, got ${describe(fn)}`);
  const open = tokens[at++];
  if (open.kind !== 'punct' || open.text !== '(') return fail(open, `expected "(" after ${fn.text}, got ${describe(open)}`);
  const first = tokens[at++];
  let arg: FqlProperty['arg'];
  if (first.kind === 'string') arg = { literal: first.value };
  else if (first.kind === 'ident') {
    const path = [first.text];
    while (tokens[at].kind === 'punct' && (tokens[at] as { text: string }).text === '.') {
      const segment = tokens[at + 1];
      if (segment.kind !== 'ident') return fail(segment, `expected a field name after ".", got ${describe(segment)}`);
      path.push(segment.text);
      at += 2;
    }
    const forbidden = pathRule(path, 'field');
    if (forbidden) return fail(first, forbidden);
    arg = { path };
  } else return fail(first, `${fn.text}() takes a field or a quoted string, got ${describe(first)}`);
  const close = tokens[at++];
  if (close.kind !== 'punct' || close.text !== ')') return fail(close, `expected ")", got ${describe(close)}`);
  const end = tokens[at];
  if (end.kind !== 'end') return fail(end, `expected the end after ")", got ${describe(end)}`);
  return { ok: true, property: { fn: fn.text as CaseFunction, arg } };
}

/** The words of a value: runs of letters and digits, split where a lower-case letter meets an upper-case one. */
const words = (value: string): string[] => value.replace(/([a-z0-9])([A-Z])/g, '$1 $2').split(/[^\p{L}\p{N}]+/u).filter(Boolean);

/** One case function applied to a string (Segment does not document titlecase's exact rule: each word's first letter up, the rest down). */
export function applyCase(fn: CaseFunction, value: string): string {
  switch (fn) {
    case 'lowercase':
      return value.toLowerCase();
    case 'uppercase':
      return value.toUpperCase();
    case 'snakecase':
      return words(value).map((w) => w.toLowerCase()).join('_');
    case 'kebabcase':
      return words(value).map((w) => w.toLowerCase()).join('-');
    case 'titlecase':
      return value.toLowerCase().replace(/(^|\s)(\p{L})/gu, (_, space: string, letter: string) => space + letter.toUpperCase());
  }
}
