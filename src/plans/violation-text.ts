import type { SchemaError } from '../programs/json-schema';

/**
 * What a violation says, as a person would say it: one sentence per JSON Schema keyword of the plan
 * vocabulary (json-schema-vocabulary.ts), from the validator's error. Pure. The sentence names
 * fields and the rule's own words (its pattern, its allowed values, its bounds), never a value of the
 * message: the API's violations, the forwarded `Violation Generated` and the portal all show it.
 * Keywords that only gather others (`allOf`, `properties`, `$ref`, `then`, `else`, `dependentSchemas`)
 * report through their parts' errors and make none of their own.
 */

/** At most this many allowed values are listed: a long enum says how many more there are. */
const MAX_LISTED = 10;

const article = (type: string) => (type === 'null' ? 'null' : type === 'boolean' ? 'true or false' : /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);

/** `["string","null"]` → "a string or null". */
const typesText = (type: unknown) => {
  const types = (Array.isArray(type) ? type : String(type).split(',')).map(String);
  return types.length <= 1 ? article(types[0] ?? '') : `${types.slice(0, -1).map(article).join(', ')} or ${article(types[types.length - 1])}`;
};

const plural = (count: unknown, one: string, many = `${one}s`) => `${String(count)} ${Number(count) === 1 ? one : many}`;

/** Values of the rule (never of the message) as JSON, the list cut at MAX_LISTED. */
const valuesText = (values: unknown) => {
  const list = Array.isArray(values) ? values : [];
  const shown = list.slice(0, MAX_LISTED).map((value) => JSON.stringify(value)).join(', ');
  return list.length > MAX_LISTED ? `${shown} (and ${list.length - MAX_LISTED} more)` : shown;
};

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * What a `not` excludes, read from its schema: a pattern, a value, a type, present names; or
 * undefined for one that says more than one thing (then the sentence is a general one).
 */
function excluded(schema: unknown): string | undefined {
  if (schema === true) return 'is present, which the rule does not allow';
  if (!isObject(schema)) return undefined;
  const keys = Object.keys(schema).filter((key) => !['type', 'title', 'description', '$comment'].includes(key));
  if (keys.length === 0 && schema.type !== undefined) return `must not be ${typesText(schema.type)}`;
  if (keys.length !== 1) return undefined;
  const [key] = keys;
  const value = schema[key];
  if (key === 'pattern' && typeof value === 'string') return `matches the excluded pattern ${value}`;
  if (key === 'enum') return `is one of the excluded values ${valuesText(value)}`;
  if (key === 'const') return `is the excluded value ${JSON.stringify(value)}`;
  if (key === 'format' && typeof value === 'string') return `must not be ${article(value)}`;
  if (key === 'required' && Array.isArray(value)) return `must not have ${value.map(String).join(', ')}`;
  return undefined;
}

/** The sentence after the field, for each keyword; `undefined` for a keyword it does not know. */
function predicate(error: SchemaError): string | undefined {
  const p = error.params;
  // A pattern or format not checked because the string is past the bound says exactly that (json-schema.ts).
  if (p.tooLong === true && error.message) return error.message;
  switch (error.keyword) {
    case 'type':
      return `must be ${typesText(p.type)}`;
    case 'dependentRequired':
    case 'dependencies':
      return `must have ${String(p.missingProperty)} when it has ${String(p.property)}`;
    case 'minimum':
      return `must be at least ${String(p.limit)}`;
    case 'maximum':
      return `must be at most ${String(p.limit)}`;
    case 'exclusiveMinimum':
      return `must be greater than ${String(p.limit)}`;
    case 'exclusiveMaximum':
      return `must be less than ${String(p.limit)}`;
    case 'multipleOf':
      return `must be a multiple of ${String(p.multipleOf)}`;
    case 'minLength':
      return `must be at least ${plural(p.limit, 'character')} long`;
    case 'maxLength':
      return `must be at most ${plural(p.limit, 'character')} long`;
    case 'pattern':
      return typeof error.propertyName === 'string' ? `has a property name, ${error.propertyName}, that does not match the pattern ${String(p.pattern)}` : `must match the pattern ${String(p.pattern)}`;
    case 'format':
      return `must be ${article(String(p.format))} (the ${String(p.format)} format)`;
    case 'minItems':
      return `must have at least ${plural(p.limit, 'item')}`;
    case 'maxItems':
    case 'additionalItems':
    case 'unevaluatedItems':
    case 'items':
      return `must have at most ${plural(p.limit, 'item')}`;
    case 'uniqueItems':
      return typeof p.i === 'number' && typeof p.j === 'number' ? `must not have duplicate items (items ${p.j} and ${p.i} are the same)` : 'must not have duplicate items';
    case 'contains':
      if (p.maxContains !== undefined) return `must have at most ${plural(p.maxContains, 'item')} matching its contains schema`;
      return `must have at least ${plural(p.minContains ?? 1, 'item')} matching its contains schema`;
    case 'minProperties':
      return `must have at least ${plural(p.limit, 'property', 'properties')}`;
    case 'maxProperties':
      return `must have at most ${plural(p.limit, 'property', 'properties')}`;
    case 'enum':
      return `must be one of ${valuesText(p.allowedValues)}`;
    case 'const':
      return `must be ${JSON.stringify(p.allowedValue)}`;
    case 'not':
      return excluded(error.schema) ?? 'matches a schema the rule excludes (its not)';
    case 'anyOf':
      return Array.isArray(error.schema) ? `must match at least one of its ${error.schema.length} alternatives (anyOf)` : 'must match at least one of its alternatives (anyOf)';
    case 'oneOf':
      return Array.isArray(p.passingSchemas) ? `must match exactly one of its alternatives (oneOf), but matches ${p.passingSchemas.length}` : 'must match exactly one of its alternatives (oneOf), but matches none';
    case 'if':
      return p.failingKeyword === 'else' ? 'must match its else schema, since it does not meet the if condition' : 'must match its then schema, since it meets the if condition';
    case 'additionalProperties':
      return `has the property ${String(p.additionalProperty)}, which the rule does not allow`;
    case 'unevaluatedProperties':
      return `has the property ${String(p.unevaluatedProperty)}, which the rule does not allow`;
    case 'propertyNames':
      return `has a property name the rule does not allow: ${String(p.propertyName)}`;
    case 'false schema':
      return 'is present, which the rule does not allow';
    default:
      return undefined;
  }
}

/**
 * The violation's sentence: the field (`(root)` for the message itself) and what is wrong with it.
 * A missing required name is its own field (`properties.plan is required`); a keyword it does not
 * know keeps the validator's words, `NOT` in lower case.
 */
export function violationText(error: SchemaError, field: string): string {
  if (error.keyword === 'required') return `${field} is required`;
  const subject = field || '(root)';
  const said = predicate(error) ?? (error.message ? error.message.replace(/\bNOT\b/g, 'not') : `fails ${error.keyword}`);
  return `${subject} ${said}`;
}
