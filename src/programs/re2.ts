import { RE2JS } from 're2js';
import { RE2_BOUNDS } from './bounds';

/**
 * RE2 patterns, the regular expressions users write (JSON Schema `pattern` and `patternProperties`
 * keys): compiled on re2js, linear in the text whatever the pattern (`^(a+)+$` cannot backtrack),
 * and the same dialect as Segment's Go validator, which refuses `(?!`. Bounded in size too
 * (bounds.ts): when re2js's DFA gives up it falls back to a matcher whose cost per character is
 * the program's size.
 */

/**
 * A pattern as JSON Schema runs it (a match anywhere in the string), on RE2: compiled once, matched
 * in linear time. The pattern is compiled alone first, so one that is no RE2 expression (or that
 * only balances inside a wrapper, `a)(b`) fails as itself. It is then matched as the whole string
 * `(?s:.*)(?:pattern)(?s:.*)` with `testExact`: a match anywhere is exactly a whole-string match of
 * that, and it takes re2js's DFA, where `test` on a pattern such as `^order-[0-9]+$` takes its
 * one-pass matcher at about three times the cost (0.5 against 0.16 µs). Flags set inside the
 * pattern stay inside its group, and `^`/`$` still mean the text's ends (no `m` flag).
 */
export function re2Search(pattern: string): { test: (text: string) => boolean } {
  RE2JS.compile(pattern);
  // RE2's `\Q…` quotes to the end of the pattern when no `\E` ends it: ended here, or it would quote the wrapper.
  const quoted = unterminatedQuote(pattern) ? `${pattern}\\E` : pattern;
  const anywhere = RE2JS.compile(`(?s:.*)(?:${quoted})(?s:.*)`);
  return { test: (text: string) => anywhere.testExact(text) };
}

/** Whether a pattern (one RE2 compiles) ends inside a `\Q` quote: RE2 ends a quote at the first `\E`, whatever precedes it. */
export function unterminatedQuote(pattern: string): boolean {
  for (let at = 0; at < pattern.length; at++) {
    if (pattern[at] !== '\\') continue;
    if (pattern[at + 1] !== 'Q') {
      at++;
      continue;
    }
    const end = pattern.indexOf('\\E', at + 2);
    if (end < 0) return true;
    at = end + 1;
  }
  return false;
}

/** Why a pattern cannot be saved (no RE2 expression, or over a bound), or undefined when it can. */
export function re2Problem(pattern: string): string | undefined {
  if (pattern.length > RE2_BOUNDS.maxPatternLength) return `is longer than ${RE2_BOUNDS.maxPatternLength} characters (a pattern's cost per character grows with its size)`;
  let size: number;
  try {
    size = RE2JS.compile(pattern).programSize();
  } catch (err) {
    return `is not an RE2 regular expression (lookarounds and backreferences are not supported): ${(err as Error).message}`;
  }
  if (size > RE2_BOUNDS.maxProgramSize) return `compiles to ${size} RE2 instructions, over ${RE2_BOUNDS.maxProgramSize} (a pattern's cost per character grows with its size; use smaller repeat counts)`;
  return undefined;
}
