import Ajv, { type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import Ajv2019 from 'ajv/dist/2019';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { RE2JS } from 're2js';
import { isDateTime } from './date-time-format';

/**
 * A tracking-plan rule's `jsonSchema` compiled once, when it is saved (and once per
 * process per saved version at ingest, plan-reader.ts), never per event. Patterns run on RE2
 * (re2js): linear time whatever the pattern, so `^(a+)+$` cannot stall ingestion, and the same
 * dialect as Segment's Go validator, which refuses `(?!`. ajv is strict, so a misspelt keyword is
 * a 400; Segment's own extra keys (`labels`) are declared as a vocabulary so an export passes as is.
 */

/** Keys Segment's exports carry beside JSON Schema's own (`description` is an annotation JSON Schema already knows). */
export const SEGMENT_KEYWORDS = ['labels'] as const;

/** The drafts a rule may declare in `$schema`; draft-07 when it declares none, as on Segment. */
const DRAFTS = {
  'draft-07': ['http://json-schema.org/draft-07/schema', 'https://json-schema.org/draft-07/schema'],
  '2019-09': ['https://json-schema.org/draft/2019-09/schema', 'http://json-schema.org/draft/2019-09/schema'],
  '2020-12': ['https://json-schema.org/draft/2020-12/schema', 'http://json-schema.org/draft/2020-12/schema'],
} as const;
export type Draft = keyof typeof DRAFTS;

/** The draft a `$schema` names (a trailing `#` ignored), or undefined for one this validator does not speak. */
export function draftOf(schemaUri: unknown): Draft | undefined {
  if (schemaUri === undefined) return 'draft-07';
  if (typeof schemaUri !== 'string') return undefined;
  const uri = schemaUri.replace(/#$/, '');
  return (Object.keys(DRAFTS) as Draft[]).find((draft) => (DRAFTS[draft] as readonly string[]).includes(uri));
}

/**
 * A pattern as JSON Schema runs it (a match anywhere in the string), on RE2: compiled once, matched
 * in linear time. The pattern is compiled alone first, so one that is no RE2 expression (or that
 * only balances inside a wrapper, `a)(b`) fails as itself. It is then matched as the whole string
 * `(?s:.*)(?:pattern)(?s:.*)` with `testExact`: a match anywhere is exactly a whole-string match of
 * that, and it takes re2js's DFA, where `test` on a pattern such as `^order-[0-9]+$` takes its
 * one-pass matcher at about three times the cost (0.5 against 0.16 µs). Flags set inside the
 * pattern stay inside its group, and `^`/`$` still mean the text's ends (no `m` flag). Either way
 * it is RE2: no backtracking, whatever the pattern or the input (`^(a+)+$` stays linear).
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

/** ajv's regular-expression engine: RE2 semantics (re2Search). */
const re2Engine = Object.assign(
  (pattern: string) => {
    const { test } = re2Search(pattern);
    return { test, toString: () => pattern };
  },
  { code: 're2js' },
);

/**
 * ajv-formats' full `date-time` (RFC 3339, leap seconds, a time zone required) checked in one pass
 * (date-time-format.ts): its regular expressions and split cost about 1 µs per event. The
 * comparison (for `formatMinimum` and the like) stays ajv-formats' own.
 */
const DATE_TIME_FORMAT = { validate: isDateTime, compare: (addFormats.get('date-time') as { compare: (a: string, b: string) => number | undefined }).compare };

const AJV_OPTIONS: Options = {
  strict: true,
  // Segment's rules type `properties` without `type: object` beside it, list required names that
  // a sibling schema declares, and give tuples without a length: none of it is a typo.
  strictTypes: false,
  strictRequired: false,
  strictTuples: false,
  allowUnionTypes: true,
  allErrors: true,
  code: { regExp: re2Engine },
  // A rule may not fetch anything: a `$ref` resolves inside the rule or fails at save.
  loadSchema: undefined,
};

/** One validator per draft (making one with its formats costs ~30 ms); `compileAlone` keeps rules apart in it. */
const AJVS = new Map<Draft, Ajv>();
function ajvFor(draft: Draft): Ajv {
  let ajv = AJVS.get(draft);
  if (!ajv) {
    ajv = draft === '2019-09' ? new Ajv2019(AJV_OPTIONS) : draft === '2020-12' ? new Ajv2020(AJV_OPTIONS) : new Ajv(AJV_OPTIONS);
    addFormats(ajv);
    ajv.addFormat('date-time', DATE_TIME_FORMAT);
    ajv.addVocabulary([...SEGMENT_KEYWORDS]);
    AJVS.set(draft, ajv);
  }
  return ajv;
}

/**
 * Compiles and forgets the schema at once: the compiled function keeps working, and no rule's
 * `$id` stays registered to collide with, or be `$ref`ed by, another rule (of this or another plan).
 */
function compileAlone(ajv: Ajv, schema: Record<string, unknown>): ValidateFunction {
  try {
    return ajv.compile(schema);
  } finally {
    ajv.removeSchema(schema);
  }
}

/** Every user pattern of a schema with its JSON Pointer: `pattern` values and `patternProperties` keys. */
export function patternsOf(schema: unknown, at = ''): Array<{ path: string; pattern: string }> {
  if (schema === null || typeof schema !== 'object') return [];
  if (Array.isArray(schema)) return schema.flatMap((item, i) => patternsOf(item, `${at}/${i}`));
  const found: Array<{ path: string; pattern: string }> = [];
  // RFC 6901's escapes, and its URI-fragment form (percent-encoding) for a colon, a percent sign or
  // white space: a 400 reads `field: rule`, so a key must not end the field early.
  const pointer = (name: string) => name.replace(/~/g, '~0').replace(/\//g, '~1').replace(/[%:\s]/gu, (c) => encodeURIComponent(c));
  for (const [key, value] of Object.entries(schema as Record<string, unknown>)) {
    const path = `${at}/${pointer(key)}`;
    if (key === 'pattern' && typeof value === 'string') found.push({ path, pattern: value });
    if (key === 'patternProperties' && value && typeof value === 'object' && !Array.isArray(value)) {
      for (const name of Object.keys(value)) found.push({ path: `${path}/${pointer(name)}`, pattern: name });
    }
    // `enum`, `const`, `examples` and `default` hold data, not schemas: a "pattern" key in them is a value.
    if (!['enum', 'const', 'examples', 'default'].includes(key)) found.push(...patternsOf(value, path));
  }
  return found;
}

/** Why a pattern is no RE2 expression, or undefined when it is one. */
export function re2Problem(pattern: string): string | undefined {
  try {
    RE2JS.compile(pattern);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

export type CompiledRule = { ok: true; validate: ValidateFunction } | { ok: false; path: string; problem: string };

/**
 * A rule's schema compiled, or the first reason it cannot be: `path` is a JSON Pointer inside the
 * schema (`/properties/properties/properties/sku/pattern`), '' for the schema as a whole.
 */
export function compileRule(jsonSchema: unknown): CompiledRule {
  if (jsonSchema === null || typeof jsonSchema !== 'object' || Array.isArray(jsonSchema)) return { ok: false, path: '', problem: 'must be a JSON Schema object' };
  const schema = jsonSchema as Record<string, unknown>;
  const draft = draftOf(schema.$schema);
  if (!draft) return { ok: false, path: '/$schema', problem: `must name JSON Schema draft-07, 2019-09 or 2020-12 (got ${JSON.stringify(String(schema.$schema)).slice(0, 120)})` };
  for (const { path, pattern } of patternsOf(schema)) {
    const problem = re2Problem(pattern);
    if (problem) return { ok: false, path, problem: `is not an RE2 regular expression (lookarounds and backreferences are not supported): ${problem}` };
  }
  try {
    return { ok: true, validate: compileAlone(ajvFor(draft), schema) };
  } catch (err) {
    return { ok: false, path: '', problem: (err as Error).message };
  }
}

export type { ErrorObject };
