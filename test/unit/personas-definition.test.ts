import { checkAudienceDefinition, checkComputedTraitDefinition, definitionProblem, LIMITS } from '../../src/personas/definition';

const problem = (input: unknown) => {
  const result = checkAudienceDefinition(input);
  return result.ok ? 'ok' : definitionProblem(result);
};
const traitProblem = (input: unknown) => {
  const result = checkComputedTraitDefinition(input);
  return result.ok ? 'ok' : definitionProblem(result);
};

describe('audience definitions: the grammar of docs/personas.md', () => {
  it('accepts every form the issue documents and returns it unchanged', () => {
    const definition = {
      all: [
        { trait: 'plan', op: 'eq', value: 'Premium' },
        { event: 'Order Completed', count: { op: 'gte', value: 1 }, within: '30d', where: [{ property: 'total', op: 'gt', value: 50 }] },
        { any: [{ trait: 'email', op: 'exists' }, { not: { trait: 'tags', op: 'contains', value: 'churned' } }] },
        { event: 'Signed Up' },
      ],
    };
    expect(checkAudienceDefinition(definition)).toEqual({ ok: true, value: definition });
  });

  it.each(['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'contains'])('accepts op %s with a value', (op) => {
    expect(problem({ trait: 'score', op, value: 3 })).toBe('ok');
  });

  it.each([
    [{ all: [{ trait: 'a', op: 'eq', value: 1 }, { trait: 'b', op: 'equals', value: 2 }] }, 'definition.all[1].op: unknown operator "equals"; expected one of eq, neq, gt, gte, lt, lte, exists, contains'],
    [{ any: [{ not: { trait: 'a', op: 'like', value: 'x' } }] }, 'definition.any[0].not.op: unknown operator "like"; expected one of eq, neq, gt, gte, lt, lte, exists, contains'],
    [{ trait: 'a', op: 'eq' }, 'definition.value: is required for "eq"'],
    [{ trait: 'a', op: 'exists', value: true }, 'definition.value: is not used by "exists" (wrap the condition in {"not": ...} for "does not exist")'],
    [{ trait: 'a', op: 'eq', value: null }, 'definition.value: must be a string, number or boolean, not null'],
    [{ trait: 'a', op: 'eq', value: { nested: 1 } }, 'definition.value: must be a string, number or boolean, not an object'],
    [{ trait: 'a', op: 'gt', value: false }, 'definition.value: "gt" compares numbers or strings (such as ISO dates), not booleans'],
    [{ trait: '', op: 'exists' }, 'definition.trait: must be a non-empty string naming the trait'],
    [{ trait: 'a\nb', op: 'exists' }, 'definition.trait: must not contain control characters'],
    [{ trait: 'a', op: 'exists', extra: 1 }, 'definition.extra: is not a field of a trait condition (allowed: trait, op, value)'],
    [{ trait: 'a', event: 'b', op: 'exists' }, 'definition: must have exactly one of trait, event, all, any, not, not both trait and event'],
    [{}, 'definition: must have one of trait, event, all, any, not'],
    ['plan = Premium', 'definition: must be a condition object with one of trait, event, all, any, not, not "plan = Premium"'],
    [null, 'definition: must be a condition object with one of trait, event, all, any, not, not null'],
    [{ all: { trait: 'a', op: 'exists' } }, 'definition.all: must be an array of conditions, not an object'],
    [{ any: [] }, 'definition.any: must hold at least one condition'],
    [{ not: [{ trait: 'a', op: 'exists' }] }, 'definition.not: must be a condition object with one of trait, event, all, any, not, not an array'],
    [{ event: 'E', count: 2 }, 'definition.count: must be an object such as {"op": "gte", "value": 1}, not 2'],
    [{ event: 'E', count: { op: 'contains', value: 1 } }, 'definition.count.op: unknown operator "contains"; expected one of eq, neq, gt, gte, lt, lte'],
    [{ event: 'E', count: { op: 'gte', value: -1 } }, 'definition.count.value: must be a whole number, 0 or more'],
    [{ event: 'E', count: { op: 'gte', value: 1, within: '3d' } }, 'definition.count.within: is not a field of a count (allowed: op, value)'],
    [{ event: 'E', within: '30' }, 'definition.within: "30" is not a window; use a whole number of m, h, d or w, e.g. "30d"'],
    [{ event: 'E', within: '0d' }, 'definition.within: must be longer than zero'],
    [{ event: 'E', within: '4000d' }, 'definition.within: must be at most 3650d (ten years)'],
    [{ event: 'E', where: { property: 'a', op: 'exists' } }, 'definition.where: must be an array of property conditions, not an object'],
    [{ event: 'E', where: [{ property: 'total', op: 'gt', value: 1 }, { trait: 'x', op: 'exists' }] }, 'definition.where[1].trait: is not a field of a property condition (allowed: property, op, value)'],
    [{ event: 'E', where: [{ property: 'total', op: 'gt', value: Infinity }] }, 'definition.where[0].value: must be a finite number'],
    [{ event: 42 }, 'definition.event: must be a non-empty string naming the event'],
  ])('%j → %s', (input, message) => {
    expect(problem(input)).toBe(message);
  });

  it('bounds the depth and the size of a tree, naming where the bound was crossed', () => {
    let deep: unknown = { trait: 'a', op: 'exists' };
    for (let i = 0; i < LIMITS.depth; i++) deep = { not: deep };
    expect(problem(deep)).toBe(`definition${'.not'.repeat(LIMITS.depth)}: conditions may nest at most ${LIMITS.depth} levels deep`);

    const wide = { all: Array.from({ length: 5 }, () => ({ any: Array.from({ length: 45 }, () => ({ trait: 'a', op: 'exists' })) })) };
    expect(problem(wide)).toMatch(new RegExp(`^definition\\.all\\[4\\]\\.any\\[\\d+\\]: a definition may hold at most ${LIMITS.conditions} conditions$`));
    expect(problem({ all: Array.from({ length: LIMITS.children + 1 }, () => ({ trait: 'a', op: 'exists' })) })).toBe(`definition.all: may hold at most ${LIMITS.children} conditions`);
  });

  it('names the definition however the caller calls it', () => {
    const result = checkAudienceDefinition({ trait: 'a', op: 'nope', value: 1 }, '$');
    expect(result).toEqual({ ok: false, path: '$.op', message: 'unknown operator "nope"; expected one of eq, neq, gt, gte, lt, lte, exists, contains' });
  });
});

describe('computed trait definitions', () => {
  it.each([
    [{ type: 'count', event: 'Order Completed' }],
    [{ type: 'count', event: 'Order Completed', within: '7d' }],
    [{ type: 'sum', event: 'Order Completed', property: 'total', within: '180d' }],
    [{ type: 'avg', event: 'Order Completed', property: 'total' }],
    [{ type: 'min', event: 'E', property: 'p' }],
    [{ type: 'max', event: 'E', property: 'p' }],
    [{ type: 'most_frequent', event: 'Product Viewed', property: 'category' }],
    [{ type: 'first', event: 'E', property: 'p' }],
    [{ type: 'last', event: 'E', property: 'p' }],
  ])('accepts %j', (definition) => {
    expect(checkComputedTraitDefinition(definition)).toEqual({ ok: true, value: definition });
  });

  it.each([
    [{ event: 'E' }, 'definition.type: is required; expected one of count, sum, avg, min, max, most_frequent, first, last'],
    [{ type: 'median', event: 'E', property: 'p' }, 'definition.type: unknown type "median"; expected one of count, sum, avg, min, max, most_frequent, first, last'],
    [{ type: 'sum', event: 'E' }, 'definition.property: must be a non-empty string naming the event property "sum" reads'],
    [{ type: 'count', event: 'E', property: 'p' }, 'definition.property: is not used by "count", which counts the events themselves'],
    [{ type: 'count' }, 'definition.event: must be a non-empty string naming the event'],
    [{ type: 'count', event: 'E', within: 'forever' }, 'definition.within: "forever" is not a window; use a whole number of m, h, d or w, e.g. "30d"'],
    [{ type: 'count', event: 'E', where: [] }, 'definition.where: is not a field of a computed trait definition (allowed: type, event, property, within)'],
    [['count'], 'definition: must be an object such as {"type": "sum", "event": "Order Completed", "property": "total"}, not an array'],
  ])('%j → %s', (input, message) => {
    expect(traitProblem(input)).toBe(message);
  });
});
