import fc from 'fast-check';
import { draftOf, fieldRowOf, fieldValueOf, mappingOf, type FieldRow } from '../../src/portal/web/mapping-fields';

/** FC_SEED replays a failure; the seed is printed. */
const SEED = process.env.FC_SEED !== undefined ? Number(process.env.FC_SEED) : process.env.CI ? 4444 : Date.now() % 2 ** 31;
const RUNS = Number(process.env.FC_RUNS ?? 300);

beforeAll(() => {
  console.log(`portal mapping-fields property test: FC_SEED=${SEED} (FC_RUNS=${RUNS}) replays this run`);
});

/**
 * The portal's mapping form shows each data field as key → directive and turns the form
 * back into the mapping. A round trip through the form must change nothing the operator did not edit.
 */

describe('a data field as a row of the form', () => {
  it.each<[string, unknown, FieldRow]>([
    ['a lone @path', { '@path': '$.properties.orderId' }, { key: 'k', kind: 'path', value: '$.properties.orderId' }],
    ['a lone @template', { '@template': 'Order {{properties.orderId}}' }, { key: 'k', kind: 'template', value: 'Order {{properties.orderId}}' }],
    ['a fixed text', 'hello', { key: 'k', kind: 'text', value: 'hello' }],
    ['a number', 42, { key: 'k', kind: 'json', value: '42' }],
    ['an @if directive', { '@if': { exists: { '@path': '$.userId' }, then: 'yes', else: 'no' } }, { key: 'k', kind: 'json', value: '{"@if":{"exists":{"@path":"$.userId"},"then":"yes","else":"no"}}' }],
    ['@path beside another key', { '@path': '$.a', extra: 1 }, { key: 'k', kind: 'json', value: '{"@path":"$.a","extra":1}' }],
    ['@path whose value is not a string', { '@path': 1 }, { key: 'k', kind: 'json', value: '{"@path":1}' }],
    ['a nested object', { user: { '@path': '$.userId' } }, { key: 'k', kind: 'json', value: '{"user":{"@path":"$.userId"}}' }],
  ])('shows %s as the simplest kind that says it exactly', (_, value, row) => {
    expect(fieldRowOf('k', value)).toEqual(row);
    expect(fieldValueOf(row)).toEqual(value);
  });

  it('names the key of a JSON row that does not parse', () => {
    expect(() => fieldValueOf({ key: 'total', kind: 'json', value: '{"@path":' })).toThrow(/^data field "total": not JSON/);
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

  it('leaves out header rows without a name and data rows without a key', () => {
    const draft = draftOf(exported);
    draft.headers.push({ name: ' ', value: 'x' });
    draft.fields.push({ key: '', kind: 'text', value: 'x' });
    expect(mappingOf(draft)).toEqual(exported);
  });

  it('round-trips any data made of directives and values (property; seed printed on failure)', () => {
    const leaf = fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null));
    const directive = fc.oneof(
      leaf,
      fc.string().map((p) => ({ '@path': p })),
      fc.string().map((t) => ({ '@template': t })),
      fc.dictionary(fc.string({ minLength: 1 }), leaf),
    );
    fc.assert(
      fc.property(fc.dictionary(fc.string({ minLength: 1 }).filter((k) => k.trim() === k && k !== '__proto__'), directive), (data) => {
        const mapping = { name: 'm', enabled: true, trigger: 'type = "track"', settings: { url: 'https://example.com', method: 'POST', headers: {}, data } };
        expect(mappingOf(draftOf(mapping))).toEqual(mapping);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });
});
