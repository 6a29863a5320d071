import Ajv, { type Options, type ValidateFunction } from 'ajv';
import Ajv2019 from 'ajv/dist/2019';
import Ajv2020 from 'ajv/dist/2020';
import { JSON_SCHEMA_BOUNDS } from './bounds';
import { FORMATS } from './json-schema-formats';
import { checkVocabulary, type ValidatorDraft, type VocabularyProblem } from './json-schema-vocabulary';
import { re2Search } from './re2';

/**
 * JSON Schema, the language of tracking-plan rules, compiled at save and checked per message
 * within a stated cost (bounds.ts). The schema first passes the closed vocabulary
 * (json-schema-vocabulary.ts); what passes is compiled by an Ajv that registers nothing
 * (`addUsedSchema: false`) and is never asked to remove anything, so no rule, saved or refused,
 * can change how another is compiled. Each check is wrapped: a validator that throws, or answers
 * anything but a boolean, marks its rule broken (reported once, then answered without running),
 * never a pass and never a throw into ingestion.
 */

/** Keys Segment's exports carry beside JSON Schema's own: a vocabulary, so an export passes as is. */
export const SEGMENT_KEYWORDS = ['labels'] as const;

/** What the plan decision reads of a validator's error (Ajv's ErrorObject has these fields). */
export interface SchemaError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
  /** The keyword's own value in the rule (a \`not\`'s or \`anyOf\`'s schema), for saying what it asks; never the message's value. */
  schema?: unknown;
  /** Under \`propertyNames\`: the name that broke it (a name, as fields are). */
  propertyName?: string;
}

/** A compiled rule: `check` answers the message's schema errors (none: it passes); it never throws. */
export interface CompiledSchema {
  check: (message: unknown) => readonly SchemaError[];
}

export type CompiledSchemaResult = { ok: true; program: CompiledSchema } | { ok: false; problem: VocabularyProblem };

/** Ajv's regular-expression engine: RE2, and a string past the bound is not read (a violation says so). */
const re2Engine = Object.assign(
  (pattern: string) => {
    const { test } = re2Search(pattern);
    return { test: (text: string) => text.length <= JSON_SCHEMA_BOUNDS.maxCheckedStringLength && test(text), toString: () => pattern };
  },
  { code: 're2js' },
);

const AJV_OPTIONS: Options = {
  strict: true,
  // Segment's rules type `properties` without `type: object` beside it, list required names that
  // a sibling schema declares, and give tuples without a length: none of it is a typo.
  strictTypes: false,
  strictRequired: false,
  strictTuples: false,
  allowUnionTypes: true,
  allErrors: true,
  // Each error carries the keyword's value (a \`not\`'s schema: what it excludes). Verbose errors also
  // carry the message's value; errorsOf copies every field but that one, so no value leaves the check.
  verbose: true,
  code: { regExp: re2Engine },
  // A rule registers nothing shared: no `$id` of one rule can collide with, or be reached by, another.
  addUsedSchema: false,
  // A rule may not fetch anything: a `$ref` resolves inside the rule (the vocabulary allows nothing else).
  loadSchema: undefined,
};

const isScalar = (value: unknown) => value === null || typeof value !== 'object';

/** A key for a scalar that keeps JSON's types apart (1 and "1" are different items). */
const scalarKey = (value: unknown) => `${typeof value}:${String(value)}`;

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (isScalar(a) || isScalar(b) || Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === (b as unknown[]).length && a.every((item, i) => deepEqual(item, (b as unknown[])[i]));
  const keys = Object.keys(a as object);
  return keys.length === Object.keys(b as object).length && keys.every((key) => Object.hasOwn(b as object, key) && deepEqual((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]));
}

/**
 * `uniqueItems` within its bound: scalars in one pass through a set; other items compared pairwise
 * only up to JSON_SCHEMA_BOUNDS.maxUniqueItemsCompared of them (Ajv's own compares every pair of
 * every array: 218 ms for 4,000 objects); past it, a violation says the list is too long to check.
 */
function uniqueItems(this: unknown, unique: boolean, data: unknown[]): boolean {
  const self = uniqueItems as unknown as { errors?: unknown[] };
  if (!unique) return true;
  if (data.every(isScalar)) {
    const seen = new Set<string>();
    for (const item of data) {
      const key = scalarKey(item);
      if (seen.has(key)) {
        self.errors = [{ keyword: 'uniqueItems', message: 'must NOT have duplicate items', params: {} }];
        return false;
      }
      seen.add(key);
    }
    return true;
  }
  if (data.length > JSON_SCHEMA_BOUNDS.maxUniqueItemsCompared) {
    self.errors = [{ keyword: 'uniqueItems', message: `is too long to check for duplicate items (over ${JSON_SCHEMA_BOUNDS.maxUniqueItemsCompared} items that are not all strings, numbers, booleans or null)`, params: { tooLong: true } }];
    return false;
  }
  for (let i = 0; i < data.length; i++) {
    for (let j = i + 1; j < data.length; j++) {
      if (deepEqual(data[i], data[j])) {
        self.errors = [{ keyword: 'uniqueItems', message: `must NOT have duplicate items (items ## ${j} and ${i} are identical)`, params: { i, j } }];
        return false;
      }
    }
  }
  return true;
}

function newAjv(draft: ValidatorDraft): Ajv {
  const ajv = draft === '2019-09' ? new Ajv2019(AJV_OPTIONS) : draft === '2020-12' ? new Ajv2020(AJV_OPTIONS) : new Ajv(AJV_OPTIONS);
  for (const [name, validate] of Object.entries(FORMATS)) ajv.addFormat(name, { type: 'string', validate });
  ajv.addVocabulary([...SEGMENT_KEYWORDS]);
  // This instance's own keyword table, made here: no other instance or rule shares it.
  ajv.removeKeyword('uniqueItems');
  ajv.addKeyword({ keyword: 'uniqueItems', type: 'array', schemaType: 'boolean', validate: uniqueItems, errors: true });
  return ajv;
}

/**
 * One validator per draft, replaced after this many compiles: Ajv keeps each schema it compiled
 * (keyed by the object) for as long as it lives, and nothing is ever removed from one, so a
 * process's validators hold at most this many compiled rules beyond those its plans use.
 */
const COMPILES_PER_VALIDATOR = 500;
const validators = new Map<ValidatorDraft, { ajv: Ajv; compiles: number }>();
function validatorFor(draft: ValidatorDraft): Ajv {
  let found = validators.get(draft);
  if (!found || found.compiles >= COMPILES_PER_VALIDATOR) {
    found = { ajv: newAjv(draft), compiles: 0 };
    validators.set(draft, found);
  }
  found.compiles++;
  return found.ajv;
}

/** The value at an Ajv instance path in the message, for saying why a format or pattern failed. */
function valueAt(message: unknown, instancePath: string): unknown {
  let value = message;
  for (const segment of instancePath.split('/').slice(1)) {
    if (value === null || typeof value !== 'object') return undefined;
    const name = segment.replace(/~1/g, '/').replace(/~0/g, '~');
    value = Object.hasOwn(value, name) ? (value as Record<string, unknown>)[name] : undefined;
  }
  return value;
}

const TOO_LONG = `is too long to check (over ${JSON_SCHEMA_BOUNDS.maxCheckedStringLength} characters)`;

/** Errors as the decision reads them; a format or pattern that failed only because the string was not read says so. */
function explained(errors: readonly SchemaError[], message: unknown): readonly SchemaError[] {
  return errors.map((error) => {
    if (error.keyword !== 'format' && error.keyword !== 'pattern') return error;
    const value = valueAt(message, error.instancePath);
    return typeof value === 'string' && value.length > JSON_SCHEMA_BOUNDS.maxCheckedStringLength ? { ...error, message: TOO_LONG, params: { ...error.params, tooLong: true } } : error;
  });
}

/** A verbose error as the decision reads it: the message's value (`data`) and the parent schema left behind. */
function withoutData(error: { keyword: string; instancePath: string; params: Record<string, unknown>; message?: string; schema?: unknown; propertyName?: string }): SchemaError {
  const { keyword, instancePath, params, message, schema, propertyName } = error;
  return { keyword, instancePath, params, ...(message !== undefined && { message }), ...(keyword === 'not' || keyword === 'anyOf' ? { schema } : {}), ...(propertyName !== undefined && { propertyName }) };
}

/** A passing message's errors: one frozen list for all, so a valid event makes none. */
const NO_ERRORS: readonly SchemaError[] = Object.freeze([]);

/** What a broken rule answers for every message from then on: a violation that says so, never a pass. */
const BROKEN: readonly SchemaError[] = Object.freeze([{ keyword: 'broken', instancePath: '', params: {}, message: 'could not be checked: the rule is broken and was skipped (see the API log)' }]);

/**
 * The compiled validator behind a check that cannot throw or pass by accident. `broken` is told
 * once, the first time the validator throws or answers a non-boolean (a Promise, say).
 */
export function guardedCheck(validate: (message: unknown) => unknown, errorsOf: () => readonly SchemaError[] | null | undefined, broken: (reason: string) => void): CompiledSchema['check'] {
  let isBroken = false;
  const markBroken = (reason: string) => {
    isBroken = true;
    broken(reason);
    return BROKEN;
  };
  return (message) => {
    if (isBroken) return BROKEN;
    let valid: unknown;
    try {
      valid = validate(message);
    } catch (err) {
      return markBroken(`the rule threw ${err instanceof Error ? err.name : typeof err}`);
    }
    if (valid === true) return NO_ERRORS;
    if (valid !== false) {
      // A thenable's rejection must not go unhandled: it would end the process.
      if (valid !== null && typeof (valid as { then?: unknown }).then === 'function') (valid as Promise<unknown>).then(undefined, () => undefined);
      return markBroken(`the rule answered ${valid === null ? 'null' : typeof valid}, not true or false`);
    }
    return explained(errorsOf() ?? NO_ERRORS, message);
  };
}

/**
 * A rule's schema compiled, or the first reason it cannot be (`path`: a JSON Pointer inside the
 * schema, '' for the schema as a whole). `broken` hears of a rule that breaks at evaluation.
 */
export function compileJsonSchema(jsonSchema: unknown, broken: (reason: string) => void = () => undefined): CompiledSchemaResult {
  const checked = checkVocabulary(jsonSchema);
  if (!checked.ok) return checked;
  let validate: ValidateFunction;
  try {
    validate = validatorFor(checked.draft).compile(checked.schema);
  } catch (err) {
    return { ok: false, problem: { path: '', rule: (err as Error).message } };
  }
  return { ok: true, program: { check: guardedCheck(validate, () => validate.errors?.map(withoutData), broken) } };
}
