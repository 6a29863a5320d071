import fc from 'fast-check';
import { blankNode, NODE_KINDS, nodeOf, valueOf, type FieldNode } from '../../src/portal/web/mapping-directives';
import { draftOf, mappingOf } from '../../src/portal/web/mapping-fields';
import { mappingDataRule } from '../../src/programs/mapping';

/** FC_SEED replays a failure; the seed is printed. */
const SEED = process.env.FC_SEED !== undefined ? Number(process.env.FC_SEED) : process.env.CI ? 4444 : Date.now() % 2 ** 31;
const RUNS = Number(process.env.FC_RUNS ?? 300);

beforeAll(() => {
  console.log(`portal mapping-fields property test: FC_SEED=${SEED} (FC_RUNS=${RUNS}) replays this run`);
});

/**
 * The portal's mapping form shows a mapping's data as nested fields and one form per directive of
 * Segment's mapping kit, and turns the form back into the mapping. JSON → form → JSON must give the
 * same text, and form → JSON → form the same form: a round trip changes nothing the operator did
 * not edit.
 */

const path = (text: string): FieldNode => ({ kind: 'path', text });

describe('a value of the data as a node of the form', () => {
  it.each<[string, unknown, FieldNode]>([
    ['the whole event', { '@path': '$.' }, { kind: 'event' }],
    ['a lone @path', { '@path': '$.properties.orderId' }, path('$.properties.orderId')],
    ['a lone @template', { '@template': 'Order {{properties.orderId}}' }, { kind: 'template', text: 'Order {{properties.orderId}}' }],
    ['an @liquid template', { '@liquid': '{{ properties.total | times: 100 }}' }, { kind: 'liquid', text: '{{ properties.total | times: 100 }}' }],
    ['a fixed text', 'hello', { kind: 'text', text: 'hello' }],
    ['a number', 42, { kind: 'value', json: '42' }],
    ['null', null, { kind: 'value', json: 'null' }],
    ['a list', [1, 'a'], { kind: 'list', items: [{ kind: 'value', json: '1' }, { kind: 'text', text: 'a' }] }],
    ['a nested object as nested fields', { user: { id: { '@path': '$.userId' } } }, { kind: 'fields', fields: [{ key: 'user', node: { kind: 'fields', fields: [{ key: 'id', node: path('$.userId') }] } }] }],
    ['@if exists', { '@if': { exists: { '@path': '$.userId' }, then: 'yes', else: 'no' } }, { kind: 'if', test: 'exists', condition: path('$.userId'), then: { kind: 'text', text: 'yes' }, else: { kind: 'text', text: 'no' } }],
    ['@if blank, no else', { '@if': { blank: { '@path': '$.email' }, then: { '@path': '$.email' } } }, { kind: 'if', test: 'blank', condition: path('$.email'), then: path('$.email') }],
    ['@if with its options in another order (kept)', { '@if': { then: 1, exists: { '@path': '$.a' } } }, { kind: 'if', test: 'exists', condition: path('$.a'), then: { kind: 'value', json: '1' }, order: ['then', 'exists'] }],
    ['@case', { '@case': { operator: 'upper', value: { '@path': '$.event' } } }, { kind: 'case', operator: 'upper', value: path('$.event') }],
    [
      '@replace with every option',
      { '@replace': { pattern: ' ', replacement: '_', pattern2: '-', replacement2: '', ignorecase: true, global: false, value: { '@path': '$.event' } } },
      { kind: 'replace', pattern: ' ', replacement: '_', pattern2: '-', replacement2: '', ignorecase: true, global: false, value: path('$.event') },
    ],
    ['@replace with the least', { '@replace': { pattern: 'a', value: 'abc' } }, { kind: 'replace', pattern: 'a', value: { kind: 'text', text: 'abc' } }],
    [
      '@arrayPath with an item shape',
      { '@arrayPath': ['$.properties.products', { sku: { '@path': '$.sku' } }] },
      { kind: 'arrayPath', root: '$.properties.products', shape: { kind: 'fields', fields: [{ key: 'sku', node: path('$.sku') }] } },
    ],
    ['@arrayPath with a root only', { '@arrayPath': ['$.properties.products'] }, { kind: 'arrayPath', root: '$.properties.products' }],
    ['@json', { '@json': { value: { '@path': '$.properties' }, mode: 'encode' } }, { kind: 'json', mode: 'encode', value: path('$.properties') }],
    ['@flatten', { '@flatten': { value: { '@path': '$.traits' }, separator: '.', omitArrays: true } }, { kind: 'flatten', separator: '.', omitArrays: true, value: path('$.traits') }],
    ['@merge', { '@merge': { direction: 'right', objects: [{ '@path': '$.traits' }, { plan: 'pro' }] } }, { kind: 'merge', direction: 'right', objects: [path('$.traits'), { kind: 'fields', fields: [{ key: 'plan', node: { kind: 'text', text: 'pro' } }] }] }],
    ['@transform', { '@transform': { apply: { id: { '@path': '$.userId' } }, mapping: { '@path': '$.id' } } }, { kind: 'transform', apply: { kind: 'fields', fields: [{ key: 'id', node: path('$.userId') }] }, mapping: path('$.id') }],
    ['@literal', { '@literal': { '@path': '$.a' } }, { kind: 'literal', value: path('$.a') }],
    ['@excludeWhenNull', { '@excludeWhenNull': { '@path': '$.traits.email' } }, { kind: 'excludeWhenNull', value: path('$.traits.email') }],
    // What the form has no fields for stays JSON, as written.
    ['@path beside another key', { '@path': '$.a', extra: 1 }, { kind: 'raw', json: '{"@path":"$.a","extra":1}' }],
    ['@path whose value is not a string', { '@path': 1 }, { kind: 'raw', json: '{"@path":1}' }],
    ['an unknown directive', { '@nonsense': 1 }, { kind: 'raw', json: '{"@nonsense":1}' }],
    ['a directive with _metadata', { '@path': '$.a', _metadata: {} }, { kind: 'raw', json: '{"@path":"$.a","_metadata":{}}' }],
    ['@if with both tests', { '@if': { exists: 1, blank: 2 } }, { kind: 'raw', json: '{"@if":{"exists":1,"blank":2}}' }],
    ['@replace with an option it does not know', { '@replace': { pattern: 'a', value: 'b', flags: 'g' } }, { kind: 'raw', json: '{"@replace":{"pattern":"a","value":"b","flags":"g"}}' }],
    ['an object with a blank key', { '': 1 }, { kind: 'raw', json: '{"":1}' }],
  ])('shows %s', (_, value, node) => {
    expect(nodeOf(value)).toEqual(node);
    expect(JSON.stringify(valueOf(node))).toBe(JSON.stringify(value));
  });

  it('names where a value or JSON does not parse', () => {
    const data: FieldNode = { kind: 'fields', fields: [{ key: 'order', node: { kind: 'fields', fields: [{ key: 'total', node: { kind: 'value', json: 'forty' } }] } }] };
    expect(() => valueOf(data)).toThrow('data field "order" → "total": "forty" is not a number, true, false or null');
    expect(() => valueOf({ kind: 'fields', fields: [{ key: 'x', node: { kind: 'case', operator: 'lower', value: { kind: 'raw', json: '{' } } }] })).toThrow(/^data field "x" → value: not JSON/);
  });

  it('refuses two fields with one key, naming it', () => {
    expect(() => valueOf({ kind: 'fields', fields: [{ key: 'a', node: path('$.a') }, { key: 'a', node: path('$.b') }] })).toThrow('data: the field "a" is there twice');
  });

  it('refuses a key that starts with @ (the kit would read a directive)', () => {
    expect(() => valueOf({ kind: 'fields', fields: [{ key: '@path', node: path('$.a') }] })).toThrow('data: the key "@path" starts with @');
  });

  it('leaves out a field without a key (a blank row is no field)', () => {
    expect(valueOf({ kind: 'fields', fields: [{ key: '', node: path('$.a') }, { key: 'b', node: path('$.b') }] })).toEqual({ b: { '@path': '$.b' } });
  });

  it('starts every kind as a value the kit saves, keeping what was typed where it can', () => {
    for (const kind of NODE_KINDS) {
      const data = { field: valueOf(blankNode(kind, path('$.properties.total'))) };
      expect([kind, mappingDataRule(data)]).toEqual([kind, undefined]);
    }
    expect(blankNode('template', path('$.event'))).toEqual({ kind: 'template', text: '$.event' });
    expect(blankNode('case', path('$.event'))).toMatchObject({ kind: 'case', value: path('$.event') });
  });
});

describe('a mapping through the form and back', () => {
  // Segment's export carries keys the form has no field for; they ride along unchanged.
  const exported = {
    id: 'sub_1',
    actionId: 'act_1',
    actionSlug: 'send',
    name: 'Orders',
    enabled: false,
    trigger: 'type = "track" and event = "Order Completed"',
    settings: { url: 'https://example.com/hook', method: 'PUT', headers: { 'X-Key': '********' }, data: { text: { '@template': 'Order {{properties.orderId}}' }, total: { '@path': '$.properties.total' } }, enable_batching: false, batch_size: 100 },
  };

  it('keeps what the form has no field for (Segment ids, batching settings)', () => {
    expect(mappingOf(draftOf(exported))).toEqual(exported);
  });

  it('shows Segment\'s default body as the whole event, not as a field named "@path"', () => {
    const draft = draftOf({ ...exported, settings: { ...exported.settings, data: { '@path': '$.' } } });
    expect(draft.data).toEqual({ kind: 'event' });
    expect(mappingOf(draft).settings.data).toEqual({ '@path': '$.' });
  });

  it('drops the backpressure the API shows beside a mapping (a PATCH refuses it)', () => {
    expect(mappingOf(draftOf({ ...exported, backpressure: { until: '2026-01-01T00:00:00.000Z', reason: '429' } }))).toEqual(exported);
  });

  it('leaves out header rows without a name', () => {
    const draft = draftOf(exported);
    draft.headers.push({ name: ' ', value: 'x' });
    expect(mappingOf(draft)).toEqual(exported);
  });
});

/** Any JSON value a mapping's data may hold, directives of every kind among them (as the kit's own shapes, and broken ones). */
const { data: dataArbitrary } = fc.letrec((tie) => {
  const key = fc.oneof(fc.string(), fc.constantFrom('__proto__', 'constructor', '@path', '_metadata', 'then'));
  const str = fc.oneof(fc.string(), fc.constantFrom('$.', '$.properties.total', 'lower', 'encode', 'right'));
  const value = tie('value');
  const maybe = (a: fc.Arbitrary<unknown>) => fc.option(a, { nil: undefined });
  const withOptional = (record: Record<string, unknown>) => JSON.parse(JSON.stringify(record)) as unknown;
  return {
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.oneof(str, fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Object.is(d, -0)), fc.boolean(), fc.constant(null)),
      fc.array(value, { maxLength: 3 }),
      fc.dictionary(key, value, { maxKeys: 4 }),
      fc.constantFrom('@path', '@template', '@liquid').chain((d) => str.map((s) => ({ [d]: s }))),
      fc.constantFrom('@literal', '@excludeWhenNull', '@path').chain((d) => value.map((v) => ({ [d]: v }))),
      fc.record({ exists: value, then: maybe(value), else: maybe(value) }).map((o) => ({ '@if': withOptional(o) })),
      fc.record({ blank: value, then: maybe(value) }).map((o) => ({ '@if': withOptional(o) })),
      fc.record({ operator: str, value }).map((o) => ({ '@case': o })),
      fc.record({ pattern: str, replacement: maybe(str), ignorecase: maybe(fc.boolean()), global: maybe(fc.oneof(fc.boolean(), str)), value }).map((o) => ({ '@replace': withOptional(o) })),
      fc.tuple(str, maybe(value)).map(([root, shape]) => ({ '@arrayPath': shape === undefined ? [root] : [root, shape] })),
      fc.record({ value, mode: str }).map((o) => ({ '@json': o })),
      fc.record({ separator: str, omitArrays: maybe(fc.boolean()), value }).map((o) => ({ '@flatten': withOptional(o) })),
      fc.record({ direction: str, objects: fc.array(value, { maxLength: 3 }) }).map((o) => ({ '@merge': o })),
      fc.record({ apply: value, mapping: value }).map((o) => ({ '@transform': o })),
    ),
    data: fc.dictionary(key, value, { maxKeys: 5 }),
  };
});

/** Any form the operator can fill in (values as the form writes them: no leftover order, numbers as JSON writes them). */
const { node: nodeArbitrary } = fc.letrec((tie) => {
  const node = tie('node') as fc.Arbitrary<FieldNode>;
  const maybe = (a: fc.Arbitrary<FieldNode>) => fc.option(a, { nil: undefined });
  const str = fc.string();
  const drop = <T extends object>(o: T) => JSON.parse(JSON.stringify(o)) as T;
  const fields = fc.uniqueArray(fc.record({ key: fc.string({ minLength: 1 }).filter((k) => !k.startsWith('@')), node }), { selector: (e) => e.key, maxLength: 4 })
    // In the order any JavaScript object (and so JSON.parse) keeps keys: integer-like ones first.
    .map((f): FieldNode => ({ kind: 'fields', fields: Object.keys(Object.fromEntries(f.map((e) => [e.key, 0]))).map((key) => f.find((e) => e.key === key)!) }));
  return {
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.constant<FieldNode>({ kind: 'event' }),
      fc.constantFrom('path', 'template', 'liquid', 'text').chain((kind) => str.filter((s) => kind !== 'path' || s !== '$.').map((text) => ({ kind, text }))),
      fc.oneof(fc.integer(), fc.boolean(), fc.constant(null)).map((v): FieldNode => ({ kind: 'value', json: JSON.stringify(v) })),
      fields,
      fc.array(node, { maxLength: 3 }).map((items): FieldNode => ({ kind: 'list', items })),
      fc.record({ test: fc.constantFrom('exists' as const, 'blank' as const), condition: node, then: maybe(node), else: maybe(node) }).map((o) => drop<FieldNode>({ kind: 'if', ...o })),
      fc.record({ operator: str, value: node }).map((o): FieldNode => ({ kind: 'case', ...o })),
      fc
        .record({ pattern: str, replacement: fc.option(str, { nil: undefined }), pattern2: fc.option(str, { nil: undefined }), ignorecase: fc.option(fc.boolean(), { nil: undefined }), value: node })
        .map((o) => drop<FieldNode>({ kind: 'replace', ...o })),
      fc.record({ root: str, shape: maybe(node) }).map((o) => drop<FieldNode>({ kind: 'arrayPath', ...o })),
      fc.record({ mode: str, value: node }).map((o): FieldNode => ({ kind: 'json', ...o })),
      fc.record({ separator: str, omitArrays: fc.option(fc.boolean(), { nil: undefined }), value: node }).map((o) => drop<FieldNode>({ kind: 'flatten', ...o })),
      fc.record({ direction: str, objects: fc.array(node, { maxLength: 3 }) }).map((o): FieldNode => ({ kind: 'merge', ...o })),
      fc.record({ apply: node, mapping: node }).map((o): FieldNode => ({ kind: 'transform', ...o })),
      fc.constantFrom('literal' as const, 'excludeWhenNull' as const).chain((kind) => node.map((value): FieldNode => ({ kind, value }))),
    ),
  };
});

describe('the round trip between form and JSON (property; seed printed)', () => {
  it('JSON → form → JSON gives back the same text, keys in the same order', () => {
    fc.assert(
      fc.property(dataArbitrary, (data) => {
        const mapping = { name: 'm', enabled: true, trigger: 'type = "track"', settings: { url: 'https://example.com', method: 'POST', headers: {}, data } };
        expect(JSON.stringify(mappingOf(draftOf(mapping)))).toBe(JSON.stringify(mapping));
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('form → JSON → form gives back the same form', () => {
    fc.assert(
      fc.property(nodeArbitrary, (node) => {
        expect(nodeOf(valueOf(node))).toEqual(node);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });
});
