import { parseFql } from '../../src/rules/fql';
import { allowedConstantsRule, FORMAT_EXAMPLES, knownProperties, nearestField } from '../../src/api/field-hints';
import { unknownLiquidFilter, unknownLiquidFilterIn } from '../../src/mappings/liquid-filters';

/** Errors that teach — each names the field and the rule, and the fix when it is clear. */
const fqlError = (source: string) => {
  const parsed = parseFql(source);
  return parsed.ok ? undefined : `at column ${parsed.error.column}: ${parsed.error.message}`;
};

describe('an FQL error names the FQL spelling of a common mistake', () => {
  it.each([
    ['event = "a" && properties.x = 1', 'at column 13: "&&" cannot appear here: FQL writes it "and", e.g. event = "A" and type = "track"'],
    ['event = "a" & x = 1', 'at column 13: "&" cannot appear here: FQL writes it "and", e.g. event = "A" and type = "track"'],
    ['event = "a" || event = "b"', 'at column 13: "||" cannot appear here: FQL writes it "or", e.g. event = "A" or event = "B"'],
    ['event == "a"', 'at column 7: "==" cannot appear here: FQL writes it "=", e.g. event = "A"'],
    ['event === "a"', 'at column 7: "===" cannot appear here: FQL writes it "=", e.g. event = "A"'],
    ['event !== "a"', 'at column 7: "!==" cannot appear here: FQL writes it "!=", e.g. event != "A"'],
    ['event <> "a"', 'at column 7: "<>" cannot appear here: FQL writes it "!=", e.g. event != "A"'],
  ])('%s', (source, message) => {
    expect(fqlError(source)).toBe(message);
  });

  it.each(['event != "a"', 'event = "a" and type = "track"', "event = 'a && b'", 'event = "x==y" or !(type = "page")'])('leaves FQL as it is: %s', (source) => {
    expect(fqlError(source)).toBeUndefined();
  });
});

describe('nearestField', () => {
  it.each([
    ['category', ['categories', 'whenAbsent'], 'categories'],
    ['sharedsecret', ['sharedSecret', 'signingSecret', 'name'], 'sharedSecret'],
    ['enable', ['enabled', 'name'], 'enabled'],
    ['colour', ['name', 'enabled', 'webhooks'], undefined],
    ['ab', ['id', 'if'], undefined],
    // Two equally near: no guess.
    ['nam', ['name', 'nap'], undefined],
  ])('%s among %j → %s', (unknown, known, expected) => {
    expect(nearestField(unknown, known)).toBe(expected);
  });
});

describe('knownProperties', () => {
  const schema = { type: 'object', properties: { consent: { type: 'object', properties: { categories: {}, whenAbsent: {} } }, 'a/b': { properties: { x: {} } } } };
  it.each([
    ['#/additionalProperties', ['consent', 'a/b']],
    ['#/properties/consent/additionalProperties', ['categories', 'whenAbsent']],
    ['#/properties/a~1b/additionalProperties', ['x']],
    ['#/properties/missing/additionalProperties', []],
    ['#/properties/__proto__/additionalProperties', []],
  ])('%s → %j', (schemaPath, expected) => {
    expect(knownProperties(schema, schemaPath)).toEqual(expected);
  });
});

it('gives the date-time example the issue asks for', () => {
  expect(FORMAT_EXAMPLES['date-time']).toBe('2026-11-28T10:00:00Z');
  expect(Number.isNaN(Date.parse(FORMAT_EXAMPLES['date-time']))).toBe(false);
});

describe('allowedConstantsRule: a union of literals lists what the field may be', () => {
  const constant = (instancePath: string, allowedValue: unknown) => ({ keyword: 'const', instancePath, params: { allowedValue } });
  it.each([
    [[constant('/eventTypes/0', 'a.b'), constant('/eventTypes/0', 'c.d'), { keyword: 'anyOf', instancePath: '/eventTypes/0', params: {} }], 'must be one of a.b, c.d'],
    [[constant('/format', 'standard'), constant('/format', 'slack'), constant('/other', 'x')], 'must be one of standard, slack'],
    [[constant('/n', 1), constant('/n', null)], 'must be one of 1, null'],
    [[{ keyword: 'type', instancePath: '/x', params: {} }, constant('/x', 'a')], undefined],
    // 'a' or null: not a list of values.
    [[constant('/x', 'a'), { keyword: 'type', instancePath: '/x', params: {} }, { keyword: 'anyOf', instancePath: '/x', params: {} }], undefined],
    [[], undefined],
  ])('%j → %s', (errors, expected) => {
    expect(allowedConstantsRule(errors)).toBe(expected);
  });
});

describe('unknownLiquidFilter: a filter Liquid does not have is named before the mapping is saved', () => {
  it.each([
    ['{{ properties.total | dolars }}', 'dolars'],
    ['{{ userId | upcase | shout }}', 'shout'],
    ['{% assign x = event | nope %}{{ x }}', 'nope'],
    ['{{ properties.total | plus: 1 }}', undefined],
    ['{{ userId | upcase | default: "anon" }}', undefined],
    ['plain text', undefined],
    // A syntax error is the render check's to report, not this one's.
    ['{{ unclosed', undefined],
  ])('%s → %s', (template, expected) => {
    expect(unknownLiquidFilter(template)).toBe(expected);
  });

  it('finds the template in nested data and names its place', () => {
    const data = { user: { id: { '@path': '$.userId' }, total: { '@liquid': '{{ properties.total | dolars }}' } }, list: [{ '@liquid': 'x' }] };
    expect(unknownLiquidFilterIn(data)).toEqual({ pointer: '/user/total', filter: 'dolars' });
    expect(unknownLiquidFilterIn({ '@liquid': '{{ a | b }}' })).toEqual({ pointer: '/', filter: 'b' });
    expect(unknownLiquidFilterIn({ a: [{ '@liquid': '{{ a | upcase }}' }] })).toBeUndefined();
  });
});
