import reference from '../fixtures/segment-fql/fql-reference.json';
import { irWithFieldNames, parseFql, type FqlCondition } from '../../src/rules/fql';
import { conditionMatches } from '../../src/rules/fql-match';

function parsed(fql: string): FqlCondition {
  const result = parseFql(fql);
  if (!result.ok) throw new Error(`${fql}: ${JSON.stringify(result.error)}`);
  return result.condition;
}

function evaluate(fql: string, message: Record<string, unknown>): boolean {
  return conditionMatches(parsed(fql), message);
}

describe('FQL golden examples (segment-docs src/api/public-api/fql.md)', () => {
  it.each(reference.examples)('$fql → $result', ({ fql, result }) => {
    expect(evaluate(fql, reference.message)).toBe(result);
  });

  it.each(reference.match)('$fql → $result', ({ fql, result }) => {
    expect(evaluate(fql, {})).toBe(result);
  });

  it.each(reference.nulls.examples)('null handling: $fql → $result', ({ fql, result }) => {
    expect(evaluate(fql, reference.nulls.message)).toBe(result);
  });

  it.each(reference.subexpressions.examples)('subexpression: $fql → $result', ({ fql, result }) => {
    expect(evaluate(fql, reference.subexpressions.message)).toBe(result);
  });

  it.each(reference.escaping.examples)('escaped field path: $fql → $result', ({ fql, result }) => {
    expect(evaluate(fql, reference.escaping.message)).toBe(result);
  });
});

describe('parseFql compiles into the IR @segment/tsub evaluates', () => {
  it.each<[string, unknown]>([
    ['!(event = "X")', ['!', ['=', 'event', { value: 'X' }]]],
    ["event = 'X' and type != 'track'", ['and', ['=', 'event', { value: 'X' }], ['!=', 'type', { value: 'track' }]]],
    ['a = 1 or b = 2 or c = 3', ['or', ['=', 'a', { value: 1 }], ['=', 'b', { value: 2 }], ['=', 'c', { value: 3 }]]],
    ['a = 1 or b = 2 and c = 3', ['or', ['=', 'a', { value: 1 }], ['and', ['=', 'b', { value: 2 }], ['=', 'c', { value: 3 }]]]],
    ["contains(event, 'ecr')", ['contains', 'event', { value: 'ecr' }]],
    ["match(traits.email, '*@company.com')", ['match', 'traits.email', { value: '*@company.com' }]],
    ['length(userId) < 1', ['<', ['length', 'userId'], { value: 1 }]],
    ['properties.total >= -2.5', ['>=', 'properties.total', { value: -2.5 }]],
    ['properties.total <= 10', ['<=', 'properties.total', { value: 10 }]],
    ['properties.vip = true', ['=', 'properties.vip', { value: true }]],
    ['userId = null', ['=', 'userId', { value: null }]],
    ["type in ['track', 'page']", ['in', 'type', [{ value: 'track' }, { value: 'page' }]]],
    ['properties.enabled', 'properties.enabled'],
    ["lowercase(event) = 'signup'", ['=', ['lowercase', 'event'], { value: 'signup' }]],
    ["typeof(userId) = 'bool'", ['=', ['typeof', 'userId'], { value: 'boolean' }]],
    ["typeof(userId) != 'string'", ['!', ['=', ['typeof', 'userId'], { value: 'string' }]]],
    ['context.page.path = "/a \\" b"', ['=', 'context.page.path', { value: '/a " b' }]],
  ])('%s', (fql, ir) => {
    expect(irWithFieldNames(parsed(fql))).toEqual(ir);
  });

  it('reads "all" as the Public API\'s match-everything condition', () => {
    expect(parsed('all')).toEqual({ kind: 'all' });
  });
});

describe('FQL semantics, type strict as Segment\'s evaluator', () => {
  const message = {
    type: 'track',
    event: 'Order Completed',
    userId: 'u1',
    properties: { total: 30, vip: true, email: 'a@segment.com', tags: ['x'], nothing: null, nested: { a: 1 } },
    context: { 'dotted.key': 'yes' },
  };
  it.each<[string, boolean]>([
    ['properties.total > 20', true],
    ["properties.total > '20'", false],
    ["properties.total = '30'", false],
    ['properties.total != 30', false],
    ['properties.vip', true],
    ['properties.vip = true', true],
    ['!properties.vip', false],
    ['properties.missing = null', true],
    ['properties.nothing = null', true],
    ['properties.total = null', false],
    ['properties.total != null', true],
    ['userId != null', true],
    ['length(properties.missing) = 0', true],
    ['length(properties.tags) = 1', true],
    ["typeof(properties.tags) = 'list'", true],
    ["typeof(properties.nested) = 'list'", false],
    ["typeof(properties.nothing) = 'list'", false],
    ["typeof(properties.missing) = 'null'", true],
    ["typeof(properties.total) = 'number'", true],
    ["typeof(properties.vip) = 'bool'", true],
    ["typeof(userId) = 'string'", true],
    ["contains(properties.email, '@segment.com')", true],
    ["event = 'Order Completed' and contains(properties.email, '@segment.com')", true],
    ["!(event = 'Order Completed')", false],
    ["!(event = 'Signed Up')", true],
    ["'x' in properties.tags", true],
    ["'x' in properties.missing", false],
    ["properties.total in [10, 30]", true],
    ["context.dotted\\.key = 'yes'", true],
    ["match(event, 'Order*')", true],
    ["match(event, 'order*')", false],
  ])('%s → %s', (fql, expected) => {
    expect(evaluate(fql, message)).toBe(expected);
  });

  it('never changes the message', () => {
    const copy = structuredClone(message);
    evaluate("'x' in properties.tags and properties.missing = null", message);
    expect(message).toEqual(copy);
  });
});

describe('parse errors are values naming the column and the rule', () => {
  it.each<[string, number, string]>([
    ['', 1, 'empty'],
    ["event = 'X", 9, 'unterminated-string'],
    ['event = X and', 14, 'unexpected-token'],
    // Another language's operator is named as such, with FQL's spelling.
    ["event == 'X'", 7, 'not-fql'],
    ["userId = oops\"", 14, 'unterminated-string'],
    ["event = 'X' type = 'track'", 13, 'unexpected-token'],
    ['(event = 1', 11, 'unexpected-token'],
    ['event # 1', 7, 'invalid-character'],
    ["uppercase(event) = 'X'", 1, 'unknown-function'],
    ["frobnicate(event)", 1, 'unknown-function'],
    ["contains(event)", 1, 'wrong-argument-count'],
    ["contains(lowercase(event), 'x')", 10, 'unsupported-argument'],
    ["typeof(event) = 'object'", 15, 'unsupported-argument'],
    ["typeof(event) > 1", 15, 'unsupported-argument'],
    ['12abc = 1', 1, 'invalid-number'],
    ["'a' in 'abc'", 8, 'unsupported-argument'],
    ['properties. = 1', 13, 'unexpected-token'],
    ['event\\', 6, 'invalid-escape'],
  ])('%s → column %d, %s', (fql, column, rule) => {
    const result = parseFql(fql);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatchObject({ column, rule });
  });
});
