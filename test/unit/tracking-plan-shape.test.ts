import Ajv from 'ajv';
import { fromDraft04, keyWarning, readSegmentRule } from '../../src/api/admin/tracking-plan-shape';

it.each([
  ['a Terraform rule: json_schema as a string, key null', { type: 'COMMON', key: null, version: 1, json_schema: '{"type":"object"}' }, { type: 'COMMON', version: 1, jsonSchema: { type: 'object' } }],
  ['a Public API rule: jsonSchema as an object', { type: 'TRACK', key: 'Signed Up', version: 2, jsonSchema: { type: 'object' } }, { type: 'TRACK', key: 'Signed Up', version: 2, jsonSchema: { type: 'object' } }],
  ['a key with white space, kept as given', { type: 'TRACK', key: ' Signed Up\n', version: 1, jsonSchema: '{}' }, { type: 'TRACK', key: ' Signed Up\n', version: 1, jsonSchema: {} }],
])('reads %s', (_, rule, expected) => {
  expect(readSegmentRule(rule, 'rules[0]')).toEqual(expected);
});

it.each([
  [{ type: 'TRACK', key: 'x', version: 1, json_schema: '{not json' }, 'rules[0].json_schema: is not JSON'],
  [{ type: 'TRACK', key: 'x', version: 1, json_schema: '[1]' }, 'rules[0].json_schema: must be a JSON object'],
  [{ type: 'TRACK', key: 'x', version: 1, jsonSchema: '"text"' }, 'rules[0].jsonSchema: must be a JSON object'],
  [{ type: 'TRACK', key: 'x', version: 1, jsonSchema: {}, json_schema: '{}' }, 'rules[0].json_schema: give jsonSchema or json_schema, not both'],
  [{ type: 'TRACK', key: 'x', version: 1 }, 'rules[0].jsonSchema: is required'],
])('refuses %j naming the field', (rule, message) => {
  expect(() => readSegmentRule(rule, 'rules[0]')).toThrow(message);
});

it('flags a key with white space around it, and only such a key', () => {
  expect(keyWarning(' Signed Up', 'rules[2]')).toContain('rules[2].key: " Signed Up" has white space around it');
  expect(keyWarning('Signed Up\n', 'rules[0]')).toContain('"Signed Up\\n"');
  expect(keyWarning('Signed Up', 'rules[0]')).toBeUndefined();
  expect(keyWarning(undefined, 'rules[0]')).toBeUndefined();
});

it('leaves a draft-07 schema exactly as it is (the same object)', () => {
  const schema = { $schema: 'http://json-schema.org/draft-07/schema#', $id: 'x', properties: { id: { type: 'string' } } };
  expect(fromDraft04(schema)).toBe(schema);
});

it("reads a draft-04 schema in draft-07's words: id, boolean exclusive bounds, $schema; property names and data untouched", () => {
  expect(
    fromDraft04({
      $schema: 'http://json-schema.org/draft-04/schema#',
      id: 'http://example.com/order',
      properties: {
        id: { type: 'string', default: { id: 'kept' } },
        total: { type: 'number', minimum: 0, exclusiveMinimum: true, maximum: 100, exclusiveMaximum: false },
      },
      enum: [{ id: 'data' }],
    }),
  ).toEqual({
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: 'http://example.com/order',
    properties: {
      id: { type: 'string', default: { id: 'kept' } },
      total: { type: 'number', exclusiveMinimum: 0, maximum: 100 },
    },
    enum: [{ id: 'data' }],
  });
});

// Draft-04's meaning: minimum 0 and maximum 100, both exclusive: only 0 < total < 100 passes.
it.each([
  [-1, false],
  [0, false],
  [0.5, true],
  [99.5, true],
  [100, false],
  [100.5, false],
])('decides total = %d as the draft-04 original meant (%s)', (total, passes) => {
  const original = {
    $schema: 'http://json-schema.org/draft-04/schema#',
    id: 'http://example.com/t',
    type: 'object',
    properties: { total: { type: 'number', minimum: 0, exclusiveMinimum: true, maximum: 100, exclusiveMaximum: true } },
  };
  const { $schema: _draft07, ...rewritten } = fromDraft04(original);
  expect(new Ajv({ strict: true }).compile(rewritten)({ total })).toBe(passes);
});
