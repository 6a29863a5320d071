import { transform } from '@segment/tsub';
import { applyFilters, compileFilter, type CompiledFilter, type FilterSettings } from '../../src/rules/destination-filters';
import { parseFql } from '../../src/rules/fql';
import { compileTrigger } from '../../src/rules/mapping-triggers';
import { allowOwnProperties, dropOwnProperties, forbiddenSegment, ownValueAt, pathRule } from '../../src/rules/safe-path';
import { kitPathSegments, mappingPathViolation } from '../../src/mappings/mapping-paths';
import { renderMappingBody } from '../../src/mappings/render-mapping';
import { findMappingsViolation } from '../../src/mappings/validate-mappings';
import type { ActionsMapping } from '../../src/mappings/types';

/** One walker for every path a user supplies, own properties only. */

const HOSTILE_PATHS = ['__proto__', 'constructor', 'prototype', 'constructor.prototype', 'a.__proto__.b', 'type.constructor.prototype', 'properties.items.constructor.prototype'];

describe('the safe path walker', () => {
  it.each<[string | string[], string | undefined]>([
    ['properties.email', undefined],
    ['', undefined],
    ['constructors.prototypes', undefined],
    ['__proto__', '__proto__'],
    ['constructor.prototype', 'constructor'],
    ['a.__proto__.b', '__proto__'],
    ['properties.items.prototype', 'prototype'],
    [['properties', 'constructor'], 'constructor'],
    [['a.constructor'], undefined],
  ])('finds the forbidden segment of %j: %j', (path, segment) => {
    expect(forbiddenSegment(path)).toBe(segment);
  });

  it('names the path and the segment in the rule a 400 reads', () => {
    expect(pathRule('constructor.prototype')).toMatch(/^key "constructor\.prototype" has a forbidden segment "constructor"/);
    expect(pathRule('properties.email')).toBeUndefined();
  });

  it.each(HOSTILE_PATHS)('reads nothing inherited at %j', (path) => {
    expect(ownValueAt({ type: 'track', a: { b: 1 }, properties: { items: [] } }, path)).toBeUndefined();
  });

  it('reads own values, array elements included', () => {
    expect(ownValueAt({ properties: { items: [{ sku: 'x' }] } }, 'properties.items.0.sku')).toBe('x');
    expect(ownValueAt({ a: null }, 'a.b')).toBeUndefined();
  });

  const message = () => ({
    type: 'track',
    userId: 'u',
    properties: { email: 'e', total: 1, products: [{ sku: 's', price: 1 }, { sku: 't', price: 2 }, 'loose'] },
    context: { ip: '1', library: { name: 'n', version: 'v' } },
  });
  it.each<[string, Record<string, string[]>]>([
    ['a top-level key', { '': ['userId'] }],
    ['an object', { properties: ['email', 'missing'] }],
    ['each object of an array', { 'properties.products': ['price'] }],
    ['a nested object', { 'context.library': ['version'] }],
    ['a missing key', { nothing: ['x'] }],
    ['a key naming a string', { type: ['length'] }],
  ])('drops and allows %s exactly as @segment/tsub does on an honest message', (_, fields) => {
    const ours = message();
    dropOwnProperties(ours, fields);
    const tsubs = message();
    transform(tsubs, [{ type: 'drop_properties', config: { drop: fields } }]);
    expect(ours).toEqual(tsubs);
    const allowedOurs = message();
    allowOwnProperties(allowedOurs, fields);
    const allowedTsubs = message();
    transform(allowedTsubs, [{ type: 'allow_properties', config: { allow: fields } }]);
    expect(allowedOurs).toEqual(allowedTsubs);
  });
});

describe('a filter never reaches a prototype', () => {
  const valid: FilterSettings = { title: 'x', enabled: true, if: 'all', actions: [{ type: 'DROP' }] };
  it.each<[string, Partial<FilterSettings>, string, RegExp]>([
    ['a DROP_PROPERTIES key', { actions: [{ type: 'DROP_PROPERTIES', fields: { 'constructor.prototype': ['hasOwnProperty'] } }] }, 'actions[0].fields', /key "constructor\.prototype" has a forbidden segment "constructor"/],
    ['an ALLOW_PROPERTIES key', { actions: [{ type: 'ALLOW_PROPERTIES', fields: { 'a.__proto__.b': ['x'] } }] }, 'actions[0].fields', /forbidden segment "__proto__"/],
    ['a listed name', { actions: [{ type: 'DROP_PROPERTIES', fields: { properties: ['__proto__'] } }] }, 'actions[0].fields["properties"]', /path "properties\.__proto__" has a forbidden segment/],
    ['a top-level listed name', { actions: [{ type: 'DROP_PROPERTIES', fields: { '': ['constructor'] } }] }, 'actions[0].fields[""]', /path "constructor"/],
    ['a SAMPLE path', { actions: [{ type: 'SAMPLE', percent: 0.5, path: 'userId.constructor' }] }, 'actions[0].path', /path "userId\.constructor" has a forbidden segment "constructor"/],
    ['an FQL field', { if: "properties.__proto__.x = 'y'" }, 'if', /field "properties\.__proto__\.x" has a forbidden segment "__proto__"/],
  ])('answers 400 naming the path when %s walks into a prototype', (_, change, field, message) => {
    const result = compileFilter('df_x', { ...valid, ...change });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error).toMatchObject({ field, rule: 'forbidden-segment' });
      expect(result.error.message).toMatch(message);
    }
  });

  it('leaves every built-in prototype as it was even when a hostile filter skipped validation', () => {
    const probe = '__switchyardProbe';
    Object.defineProperty(Object.prototype, probe, { value: 1, configurable: true, writable: true });
    Object.defineProperty(String.prototype, probe, { value: 1, configurable: true, writable: true });
    Object.defineProperty(Array.prototype, probe, { value: 1, configurable: true, writable: true });
    try {
      const unchecked: CompiledFilter = {
        id: 'df_x',
        title: 'x',
        enabled: true,
        condition: { kind: 'all' },
        actions: [
          { type: 'DROP_PROPERTIES', fields: { 'constructor.prototype': [probe], 'type.constructor.prototype': [probe], 'properties.items.constructor.prototype': [probe] } },
          { type: 'ALLOW_PROPERTIES', fields: { 'userId.__proto__': ['nothing'] } },
        ],
      };
      applyFilters({ type: 'track', userId: 'u', properties: { items: [] } }, [unchecked]);
      expect(Object.hasOwn(Object.prototype, probe)).toBe(true);
      expect(Object.hasOwn(String.prototype, probe)).toBe(true);
      expect(Object.hasOwn(Array.prototype, probe)).toBe(true);
      expect(typeof Object.prototype.hasOwnProperty).toBe('function');
    } finally {
      for (const proto of [Object.prototype, String.prototype, Array.prototype]) delete (proto as Record<string, unknown>)[probe];
    }
  });
});

describe('FQL field references and triggers refuse a path into a prototype', () => {
  it.each(["constructor = 'x'", "properties.constructor.name = 'Object'", '__proto__ = null', "context.prototype = 1", "!(a.b.__proto__ = 1)", "'x' in properties.constructor"])('%s', (fql) => {
    const parsed = parseFql(fql);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error.rule).toBe('forbidden-segment');
  });

  it('a saved trigger with one compiles to nothing (matches no message) rather than reading a prototype', () => {
    expect(compileTrigger({ name: 'A', trigger: "properties.constructor.name = 'Object'" })).toBeUndefined();
  });
});

describe('mapping paths checked before the mapping kit sees them', () => {
  const mapping = (data: unknown): ActionsMapping => ({ name: 'A', enabled: true, trigger: 'all', settings: { url: 'https://example.com/hook', method: 'POST', headers: {}, data: data as Record<string, unknown> } });

  it.each<[string, string[]]>([
    ['$.properties.email', ['properties', 'email']],
    ['$.properties["a b"]', ['properties', 'a b']],
    ["$.products[0]['sku']", ['products', '0', 'sku']],
    ['$.constructor.prototype', ['constructor', 'prototype']],
  ])('splits %j as the kit does', (path, segments) => {
    expect(kitPathSegments(path)).toEqual(segments);
  });

  it.each<[string, unknown, string]>([
    ['@path', { who: { '@path': '$.constructor.prototype' } }, '/who/@path path "$.constructor.prototype" has a forbidden segment "constructor"'],
    ['@path with brackets', { who: { '@path': '$["__proto__"]' } }, '/who/@path path "$[\\"__proto__\\"]" has a forbidden segment "__proto__"'],
    ['@path inside @if', { v: { '@if': { exists: { '@path': '$.userId.constructor' }, then: 1, else: 2 } } }, '/v/@if/exists/@path path "$.userId.constructor"'],
    ['@arrayPath', { items: { '@arrayPath': ['$.properties.prototype', { sku: { '@path': '$.sku' } }] } }, '/items/@arrayPath path "$.properties.prototype"'],
    ['@template', { t: { '@template': 'Hi {{properties.__proto__.x}}' } }, '/t/@template path "properties.__proto__.x"'],
  ])('answers 400 naming the mapping and the path when %s walks into a prototype', (_, data, message) => {
    const violation = findMappingsViolation([mapping(data)]);
    expect(violation?.field).toBe('mappings[0].settings.data');
    expect(violation?.rule).toContain(message);
  });

  it('refuses a mapping nested deeper than the limit, before the kit recurses into it', () => {
    let data: Record<string, unknown> = { '@path': '$.userId' };
    for (let i = 0; i < 2_000; i++) data = { a: data };
    expect(mappingPathViolation(data)?.rule).toMatch(/nests deeper than 64 levels/);
    expect(findMappingsViolation([mapping(data)])?.rule).toMatch(/nests deeper than 64 levels/);
  });

  it('never renders a saved mapping whose path walks into a prototype', () => {
    const rendered = renderMappingBody(mapping({ who: { '@path': '$.constructor.name' } }), { userId: 'u' });
    expect(rendered).toMatchObject({ ok: false });
  });

  it('accepts honest paths', () => {
    expect(findMappingsViolation([mapping({ who: { '@path': '$.userId' }, t: { '@template': '{{properties.total}}' }, items: { '@arrayPath': ['$.properties.products', { sku: { '@path': '$.sku' } }] } })])).toBeUndefined();
  });
});

describe('mapping directives nest within a bound the mapping kit renders quickly', () => {
  const mapping = (data: unknown): ActionsMapping => ({ name: 'A', enabled: true, trigger: 'all', settings: { url: 'https://example.com/hook', method: 'POST', headers: {}, data: data as Record<string, unknown> } });
  const ifs = (n: number) => {
    let data: unknown = { '@path': '$.userId' };
    for (let i = 0; i < n; i++) data = { '@if': { exists: { '@path': '$.userId' }, then: data, else: null } };
    return { v: data };
  };

  it('accepts @if nested 7 deep (8 directives with the innermost @path)', () => {
    expect(findMappingsViolation([mapping(ifs(7))])).toBeUndefined();
  });

  it('answers 400 naming the mapping when directives nest past the limit, before the kit spends minutes on 25 nested @if', () => {
    expect(findMappingsViolation([mapping(ifs(25))])).toMatchObject({ field: 'mappings[0].settings.data', rule: expect.stringContaining('nests directives more than 8 deep') });
  });
});
