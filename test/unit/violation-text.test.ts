import { compileJsonSchema } from '../../src/programs/json-schema';
import { VOCABULARY_KEYWORDS } from '../../src/programs/json-schema-vocabulary';
import { violationOf } from '../../src/plans/violations';

/**
 * Every keyword of the plan vocabulary, checked by the real validator, and the sentence its
 * violation reads: a person's words, naming the rule's pattern, values and bounds, never the
 * message's value and never the validator's "must NOT be valid".
 */

const DRAFT_2020 = 'https://json-schema.org/draft/2020-12/schema';

/** [keyword, rule schema, message, every violation's description] */
const CASES: Array<[string, Record<string, unknown>, unknown, string[]]> = [
  ['type', { properties: { a: { type: 'number' } } }, { a: 'x' }, ['a must be a number']],
  ['type (a list)', { properties: { a: { type: ['string', 'null'] } } }, { a: 1 }, ['a must be a string or null']],
  ['type (integer, boolean)', { properties: { a: { type: 'integer' }, b: { type: 'boolean' } } }, { a: 'x', b: 1 }, ['a must be an integer', 'b must be true or false']],
  ['required', { required: ['plan'] }, {}, ['plan is required']],
  ['dependencies', { dependencies: { card: ['billing'] } }, { card: 1 }, ['(root) must have billing when it has card']],
  ['dependentRequired', { $schema: DRAFT_2020, dependentRequired: { card: ['billing'] } }, { card: 1 }, ['(root) must have billing when it has card']],
  ['minimum', { properties: { a: { minimum: 0 } } }, { a: -1 }, ['a must be at least 0']],
  ['maximum', { properties: { a: { maximum: 10 } } }, { a: 11 }, ['a must be at most 10']],
  ['exclusiveMinimum', { properties: { a: { exclusiveMinimum: 0 } } }, { a: 0 }, ['a must be greater than 0']],
  ['exclusiveMaximum', { properties: { a: { exclusiveMaximum: 10 } } }, { a: 10 }, ['a must be less than 10']],
  ['multipleOf', { properties: { a: { multipleOf: 5 } } }, { a: 7 }, ['a must be a multiple of 5']],
  ['minLength', { properties: { a: { minLength: 1 } } }, { a: '' }, ['a must be at least 1 character long']],
  ['maxLength', { properties: { a: { maxLength: 3 } } }, { a: 'long' }, ['a must be at most 3 characters long']],
  ['pattern', { properties: { sku: { pattern: '^SKU-[0-9]+$' } } }, { sku: 'x' }, ['sku must match the pattern ^SKU-[0-9]+$']],
  ['format', { properties: { email: { format: 'email' } } }, { email: 'x' }, ['email must be an email (the email format)']],
  ['minItems', { properties: { a: { minItems: 2 } } }, { a: [1] }, ['a must have at least 2 items']],
  ['maxItems', { properties: { a: { maxItems: 1 } } }, { a: [1, 2] }, ['a must have at most 1 item']],
  ['uniqueItems', { properties: { a: { uniqueItems: true } } }, { a: [1, 1] }, ['a must not have duplicate items']],
  ['uniqueItems (objects)', { properties: { a: { uniqueItems: true } } }, { a: [{}, {}] }, ['a must not have duplicate items (items 1 and 0 are the same)']],
  ['contains', { properties: { a: { contains: { const: 'x' } } } }, { a: ['y'] }, ['a.0 must be "x"', 'a must have at least 1 item matching its contains schema']],
  ['minContains', { $schema: DRAFT_2020, contains: { type: 'string' }, minContains: 2 }, ['a', 1], ['1 must be a string', '(root) must have at least 2 items matching its contains schema']],
  ['maxContains', { $schema: DRAFT_2020, contains: { type: 'string' }, maxContains: 1 }, ['a', 'b'], ['(root) must have at most 1 item matching its contains schema']],
  ['minProperties', { minProperties: 1 }, {}, ['(root) must have at least 1 property']],
  ['maxProperties', { maxProperties: 1 }, { a: 1, b: 2 }, ['(root) must have at most 1 property']],
  ['enum', { properties: { plan: { enum: ['free', 'team', 'enterprise'] } } }, { plan: 'gold' }, ['plan must be one of "free", "team", "enterprise"']],
  ['enum (long)', { properties: { n: { enum: Array.from({ length: 12 }, (_, i) => i) } } }, { n: 99 }, ['n must be one of 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 (and 2 more)']],
  ['const', { properties: { v: { const: 2 } } }, { v: 1 }, ['v must be 2']],
  ['not (the bot rule: a pattern)', { properties: { context: { properties: { userAgent: { not: { pattern: '(?i)bot|crawler|spider' } } } } } }, { context: { userAgent: 'Googlebot/2.1' } }, ['context.userAgent matches the excluded pattern (?i)bot|crawler|spider']],
  ['not (a value)', { properties: { a: { not: { const: 'test' } } } }, { a: 'test' }, ['a is the excluded value "test"']],
  ['not (values)', { properties: { a: { not: { enum: ['x', 'y'] } } } }, { a: 'x' }, ['a is one of the excluded values "x", "y"']],
  ['not (a type)', { properties: { a: { not: { type: 'null' } } } }, { a: null }, ['a must not be null']],
  ['not (names)', { not: { required: ['password'] } }, { password: 1 }, ['(root) must not have password']],
  ['not (anything else)', { properties: { a: { not: { minimum: 1, maximum: 2 } } } }, { a: 1 }, ['a matches a schema the rule excludes (its not)']],
  ['anyOf', { properties: { a: { anyOf: [{ type: 'string' }, { type: 'number' }] } } }, { a: true }, ['a must be a string', 'a must be a number', 'a must match at least one of its 2 alternatives (anyOf)']],
  ['oneOf', { properties: { a: { oneOf: [{ type: 'number' }, { type: 'integer' }] } } }, { a: 1 }, ['a must match exactly one of its alternatives (oneOf), but matches 2']],
  ['oneOf (none)', { properties: { a: { oneOf: [{ type: 'number' }] } } }, { a: 'x' }, ['a must be a number', 'a must match exactly one of its alternatives (oneOf), but matches none']],
  ['allOf', { properties: { a: { allOf: [{ type: 'string' }, { minLength: 2 }] } } }, { a: 'x' }, ['a must be at least 2 characters long']],
  ['if/then', { if: { properties: { a: { const: 1 } } }, then: { required: ['b'] } }, { a: 1 }, ['b is required', '(root) must match its then schema, since it meets the if condition']],
  ['if/else', { if: { properties: { a: { const: 1 } } }, else: { required: ['b'] } }, { a: 2 }, ['b is required', '(root) must match its else schema, since it does not meet the if condition']],
  ['additionalProperties', { properties: { a: {} }, additionalProperties: false }, { a: 1, b: 2 }, ['(root) has the property b, which the rule does not allow']],
  ['unevaluatedProperties', { $schema: DRAFT_2020, properties: { a: {} }, unevaluatedProperties: false }, { a: 1, b: 2 }, ['(root) has the property b, which the rule does not allow']],
  ['additionalItems', { items: [{}], additionalItems: false }, [1, 2], ['(root) must have at most 1 item']],
  ['items (after prefixItems)', { $schema: DRAFT_2020, prefixItems: [{}], items: false }, [1, 2], ['(root) must have at most 1 item']],
  ['prefixItems', { $schema: DRAFT_2020, prefixItems: [{ type: 'string' }] }, [1], ['0 must be a string']],
  ['unevaluatedItems', { $schema: DRAFT_2020, prefixItems: [{}], unevaluatedItems: false }, [1, 2], ['(root) must have at most 1 item']],
  ['propertyNames', { propertyNames: { pattern: '^[a-z_]+$' } }, { Bad: 1 }, ['(root) has a property name, Bad, that does not match the pattern ^[a-z_]+$', '(root) has a property name the rule does not allow: Bad']],
  ['patternProperties', { patternProperties: { '^n_': { type: 'number' } } }, { n_a: 'x' }, ['n_a must be a number']],
  ['dependentSchemas', { $schema: DRAFT_2020, dependentSchemas: { card: { required: ['billing'] } } }, { card: 1 }, ['billing is required']],
  ['$ref into definitions', { definitions: { price: { type: 'number' } }, properties: { a: { $ref: '#/definitions/price' } } }, { a: 'x' }, ['a must be a number']],
  ['$defs', { $schema: DRAFT_2020, $defs: { price: { minimum: 0 } }, properties: { a: { $ref: '#/$defs/price' } } }, { a: -1 }, ['a must be at least 0']],
  ['a false schema', { properties: { secret: false } }, { secret: 1 }, ['secret is present, which the rule does not allow']],
];

/** Keywords that make no error of their own: annotations, data, and what only gathers other schemas. */
const SILENT = ['default', 'examples', 'labels', 'title', 'description', '$comment', 'readOnly', 'writeOnly', 'deprecated', 'properties', 'then', 'else'];

describe('violationText: one sentence a keyword, from the real validator', () => {
  it.each(CASES)('%s', (_, schema, message, expected) => {
    const compiled = compileJsonSchema(schema);
    if (!compiled.ok) throw new Error(`${compiled.problem.path}: ${compiled.problem.rule}`);
    const descriptions = compiled.program.check(message).map((error) => violationOf(error, 'rule-violations').description);
    expect(descriptions).toEqual(expected);
    for (const description of descriptions) expect(description).not.toMatch(/must NOT|must be valid|must be equal to/);
  });

  it('covers every keyword a rule may use', () => {
    const covered = new Set(CASES.map(([name]) => name.split(/[ /]/)[0]));
    const missing = VOCABULARY_KEYWORDS.filter((keyword) => !SILENT.includes(keyword) && !covered.has(keyword) && !(keyword === 'definitions' && covered.has('$ref')));
    expect(missing).toEqual([]);
  });

  it('never carries the value that broke the rule', () => {
    const compiled = compileJsonSchema({ properties: { email: { not: { pattern: '@example\\.com$' } }, n: { maximum: 1 } } });
    if (!compiled.ok) throw new Error(compiled.problem.rule);
    const errors = compiled.program.check({ email: 'secret-person@example.com', n: 987654321 });
    expect(JSON.stringify(errors)).not.toMatch(/secret-person|987654321/);
    expect(errors.map((error) => violationOf(error, 'rule-violations').description)).toEqual(['email matches the excluded pattern @example\\.com$', 'n must be at most 1']);
  });
});
