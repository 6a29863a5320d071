/**
 * The tokens of Segment's Filter Query Language (src/api/public-api/fql.md in segmentio/segment-docs).
 * @segment/fql-ts has a lexer but it rejects `!` before a function and every function call
 * (shared/notes/segment-engines.md), so Destination Filters' "Only send" conditions need this one.
 */

export type FqlToken =
  | { kind: 'ident'; text: string; column: number }
  | { kind: 'string'; value: string; column: number }
  | { kind: 'number'; value: number; column: number }
  | { kind: 'punct'; text: '(' | ')' | '[' | ']' | ',' | '.'; column: number }
  | { kind: 'operator'; text: '=' | '!=' | '<' | '<=' | '>' | '>=' | '!'; column: number }
  | { kind: 'end'; column: number };

/** A condition that does not lex or parse: `column` is 1-based, `rule` a stable code the API answers with. */
export interface FqlError {
  column: number;
  rule: FqlErrorRule;
  message: string;
}

export type FqlErrorRule =
  | 'invalid-character'
  | 'unterminated-string'
  | 'invalid-number'
  | 'invalid-escape'
  | 'unexpected-token'
  | 'unknown-function'
  | 'wrong-argument-count'
  | 'unsupported-argument'
  | 'empty'
  | 'forbidden-segment'
  | 'too-deep'
  | 'not-fql';

export type LexResult = { ok: true; tokens: FqlToken[] } | { ok: false; error: FqlError };

// Segment's docs: a field name character outside {a-z A-Z 0-9 _ -} must be escaped with `\`.
const IDENT_CHAR = /[A-Za-z0-9_-]/;
const IDENT_START = /[A-Za-z_\\]/;
const DIGIT = /[0-9]/;

export function lexFql(source: string): LexResult {
  const tokens: FqlToken[] = [];
  let i = 0;
  const fail = (at: number, rule: FqlErrorRule, message: string): LexResult => ({
    ok: false,
    error: { column: at + 1, rule, message },
  });

  while (i < source.length) {
    const char = source[i];
    const column = i + 1;
    if (/\s/.test(char)) {
      i++;
      continue;
    }
    if ('()[],'.includes(char)) {
      tokens.push({ kind: 'punct', text: char as '(' | ')' | '[' | ']' | ',', column });
      i++;
      continue;
    }
    if (char === '.') {
      tokens.push({ kind: 'punct', text: '.', column });
      i++;
      continue;
    }
    const mistake = commonMistake(source, i);
    if (mistake) return fail(i, 'not-fql', mistake);
    if (char === '=') {
      tokens.push({ kind: 'operator', text: '=', column });
      i++;
      continue;
    }
    if (char === '!' || char === '<' || char === '>') {
      const withEquals = source[i + 1] === '=';
      const text = withEquals ? `${char}=` : char;
      tokens.push({ kind: 'operator', text: text as '!' | '!=' | '<' | '<=' | '>' | '>=', column });
      i += withEquals ? 2 : 1;
      continue;
    }
    if (char === '"' || char === "'") {
      // Inside a string `\` escapes the quote and itself; any other `\x` stays as written, so a
      // match() pattern keeps its glob escapes (`'ab\*d'` is the pattern ab\*d, as in Segment's docs).
      let value = '';
      let j = i + 1;
      for (;;) {
        if (j >= source.length) return fail(i, 'unterminated-string', `the string opened at column ${column} is not closed`);
        const c = source[j];
        if (c === char) break;
        if (c === '\\' && (source[j + 1] === char || source[j + 1] === '\\')) {
          value += source[j + 1];
          j += 2;
          continue;
        }
        value += c;
        j++;
      }
      tokens.push({ kind: 'string', value, column });
      i = j + 1;
      continue;
    }
    if (DIGIT.test(char) || ((char === '-' || char === '+') && DIGIT.test(source[i + 1] ?? ''))) {
      const match = /^[-+]?[0-9]+(\.[0-9]+)?/.exec(source.slice(i))!;
      const after = source[i + match[0].length];
      if (after !== undefined && (IDENT_CHAR.test(after) || after === '.')) {
        return fail(i, 'invalid-number', `"${source.slice(i).split(/[\s(),\]]/)[0]}" is not a number`);
      }
      tokens.push({ kind: 'number', value: Number(match[0]), column });
      i += match[0].length;
      continue;
    }
    if (IDENT_START.test(char)) {
      let text = '';
      let j = i;
      while (j < source.length && (IDENT_CHAR.test(source[j]) || source[j] === '\\')) {
        if (source[j] === '\\') {
          if (j + 1 >= source.length) return fail(j, 'invalid-escape', 'a `\\` must be followed by the character it escapes');
          text += source[j + 1];
          j += 2;
          continue;
        }
        text += source[j];
        j++;
      }
      tokens.push({ kind: 'ident', text, column });
      i = j;
      continue;
    }
    return fail(i, 'invalid-character', `"${char}" cannot appear here`);
  }
  tokens.push({ kind: 'end', column: source.length + 1 });
  return { ok: true, tokens };
}

/**
 * The spellings other languages taught (`&&`, `||`, `==`, `!==`, `<>`) are not FQL; the
 * error names the FQL word for each, so a person fixes the condition without reading the docs.
 */
const MISTAKES: [written: string, fql: string, example: string][] = [
  ['&&', 'and', 'event = "A" and type = "track"'],
  ['||', 'or', 'event = "A" or event = "B"'],
  ['!==', '!=', 'event != "A"'],
  ['===', '=', 'event = "A"'],
  ['==', '=', 'event = "A"'],
  ['<>', '!=', 'event != "A"'],
  ['&', 'and', 'event = "A" and type = "track"'],
  ['|', 'or', 'event = "A" or event = "B"'],
];

function commonMistake(source: string, at: number): string | undefined {
  const found = MISTAKES.find(([written]) => source.startsWith(written, at));
  return found && `"${found[0]}" cannot appear here: FQL writes it "${found[1]}", e.g. ${found[2]}`;
}
