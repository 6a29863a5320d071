import { performance } from 'node:perf_hooks';
import { ruleProblem } from '../../src/plans/rule-rules';
import { compileProgram } from '../../src/programs/compile-program';
import { draftOf } from '../../src/programs/json-schema-vocabulary';
import { violationOf } from '../../src/plans/violations';

/** What a rule may be, compiled when saved, patterns on RE2. */

/** A rule as Segment's Public API exports it (segmentio/terraform-provider-segment docs' shape). */
const segmentExport = {
  type: 'TRACK',
  key: 'Order Completed',
  version: 1,
  jsonSchema: {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    labels: {},
    description: 'Fired when an order is completed',
    properties: {
      context: {},
      traits: { type: 'object', properties: {} },
      properties: {
        type: 'object',
        properties: { order_id: { description: '', type: 'string', pattern: '^ord_[0-9]+$' }, total: { type: ['number'] } },
        required: ['order_id'],
      },
    },
    required: ['properties'],
  },
};

describe('ruleProblem: what a saved rule may be', () => {
  it('accepts a rule exported from Segment as is (draft-07, labels: {}, description)', () => {
    expect(ruleProblem(segmentExport, 'rules[0]')).toBeUndefined();
  });

  it('refuses a negative lookahead with a 400 naming the rule and the path', () => {
    const rule = { ...segmentExport, jsonSchema: { ...segmentExport.jsonSchema, properties: { properties: { properties: { sku: { type: 'string', pattern: '^(?!test).*$' } } } } } };
    expect(ruleProblem(rule, 'rules[3]')).toBe(
      'rules[3].jsonSchema/properties/properties/properties/sku/pattern: (TRACK "Order Completed" version 1) is not an RE2 regular expression (lookarounds and backreferences are not supported): error parsing regexp: invalid or unsupported Perl syntax: `(?!`',
    );
  });

  it.each([
    ['(:', '(%3A'],
    ['a b(', 'a%20b('],
    ['(\n', '(%0A'],
    ['50%(', '50%25('],
    ['a/b(', 'a~1b('],
  ])('names a refused patternProperties key %j as one field token, %s percent-encoded', (key, encoded) => {
    const problem = ruleProblem({ type: 'COMMON', version: 1, jsonSchema: { patternProperties: { [key]: {} } } }, 'rules[0]')!;
    expect(problem.startsWith(`rules[0].jsonSchema/patternProperties/${encoded}: `)).toBe(true);
    expect(problem).toMatch(/^[^\s:]+: /);
  });

  it('refuses a lookbehind or a backreference in patternProperties keys too', () => {
    expect(ruleProblem({ type: 'COMMON', version: 1, jsonSchema: { patternProperties: { '(a)\\1': {} } } }, 'rules[0]')).toMatch(/^rules\[0\]\.jsonSchema\/patternProperties\/\(a\)\\1: \(COMMON version 1\) is not an RE2/);
  });

  it('refuses a genuine keyword typo, but not Segment\'s own keys', () => {
    expect(ruleProblem({ ...segmentExport, jsonSchema: { ...segmentExport.jsonSchema, requird: ['x'] } }, 'rules[0]')).toBe('rules[0].jsonSchema/requird: (TRACK "Order Completed" version 1) unknown keyword "requird"');
  });

  it.each([
    [{ type: 'TRACK', version: 1, jsonSchema: {} }, 'rules[0].key: (TRACK version 1) is required for TRACK rules (the event name)'],
    [{ type: 'IDENTIFY', key: 'x', version: 1, jsonSchema: {} }, 'rules[0].key: (IDENTIFY "x" version 1) IDENTIFY rules have no key'],
    [{ type: 'COMMON', version: 1, jsonSchema: { $schema: 'http://json-schema.org/draft-03/schema#' } }, expect.stringContaining('rules[0].jsonSchema/$schema: (COMMON version 1) must name JSON Schema draft-04, draft-06, draft-07, 2019-09 or 2020-12')],
    [{ type: 'COMMON', version: 1, jsonSchema: { $ref: 'https://evil.example/schema.json' } }, 'rules[0].jsonSchema/$ref: (COMMON version 1) `$ref` must point inside the rule, to #/definitions/<name> or #/$defs/<name> (got "https://evil.example/schema.json")'],
  ])('refuses %j', (rule, problem) => {
    expect(ruleProblem(rule, 'rules[0]')).toEqual(problem);
  });

  it('chooses the validator by $schema: draft-07 by default, 2019-09 and 2020-12 when named', () => {
    expect([undefined, 'http://json-schema.org/draft-04/schema#', 'http://json-schema.org/draft-07/schema#', 'https://json-schema.org/draft/2019-09/schema', 'https://json-schema.org/draft/2020-12/schema', 'x'].map(draftOf)).toEqual(['draft-07', 'draft-04', 'draft-07', '2019-09', '2020-12', undefined]);
    // prefixItems is 2020-12's own keyword: unknown to draft-07's strict validator.
    expect(compileProgram('json-schema', { $schema: 'https://json-schema.org/draft/2020-12/schema', properties: { properties: { properties: { tags: { prefixItems: [{ type: 'string' }] } } } } }).ok).toBe(true);
    expect(compileProgram('json-schema', { properties: { properties: { properties: { tags: { prefixItems: [{ type: 'string' }] } } } } }).ok).toBe(false);
  });

  it('keeps two rules with the same $id apart (each compiled alone)', () => {
    const schema = { $id: 'https://schemas.example.com/same.json', properties: { properties: { required: ['a'] } } };
    expect(compileProgram('json-schema', schema).ok).toBe(true);
    expect(compileProgram('json-schema', { ...schema }).ok).toBe(true);
  });
});

describe('patterns run on RE2: a hostile pattern cannot stall ingestion', () => {
  it('answers ^(a+)+$ against 40 a\'s and a ! in milliseconds', () => {
    const compiled = compileProgram('json-schema', { properties: { properties: { properties: { name: { type: 'string', pattern: '^(a+)+$' } } } } });
    if (!compiled.ok) throw new Error(compiled.error.rule);
    const started = performance.now();
    const errors = compiled.program.check({ properties: { name: `${'a'.repeat(40)}!` } });
    // Not a speed assertion: backtracking would take longer than the universe; RE2 is linear.
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(violationOf(errors[0], 'rule-violations')).toEqual({ violationType: 'Pattern', field: 'properties.name', description: 'properties.name must match the pattern ^(a+)+$', stage: 'rule-violations' });
  });
});
