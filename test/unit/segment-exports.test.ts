import subscriptions from '../fixtures/segment-exports/webhooks-subscriptions.json';
import { settingsFromJsonText, subscriptionViolation } from '../../src/mappings/segment-subscription';
import { pastedFilterViolation } from '../../src/rules/pasted-filter';

/** What Segment's exports carry besides a filter or a mapping, checked against the route and then ignored. */
describe('subscriptionViolation', () => {
  const base = { settings: {} };
  it.each([
    ['Segment\'s own destination id', { ...base, destinationId: '65f1c7d2e8a94b0012ab34cd' }, 'dst_mine', undefined],
    ['this destination', { ...base, destinationId: 'dst_mine' }, 'dst_mine', undefined],
    ['batching off', { settings: { enable_batching: false } }, 'dst_mine', undefined],
    ['another destination', { ...base, destinationId: 'dst_other' }, 'dst_mine', { field: 'mappings[2].destinationId', rule: "names destination dst_other, not this one (dst_mine); leave it out, or give Segment's own id (it is ignored)" }],
    ['another destination, Terraform spelling', { ...base, destination_id: 'dst_other' }, 'dst_mine', { field: 'mappings[2].destination_id', rule: "names destination dst_other, not this one (dst_mine); leave it out, or give Segment's own id (it is ignored)" }],
    ['a destination of ours on a create', { ...base, destinationId: 'dst_other' }, undefined, { field: 'mappings[2].destinationId', rule: "names destination dst_other, not the one being created; leave it out, or give Segment's own id (it is ignored)" }],
    ['batching on', { settings: { enable_batching: true } }, 'dst_mine', { field: 'mappings[2].settings.enable_batching', rule: 'batching is not supported yet: every matched event is sent as its own request; set it to false or leave it out' }],
  ])('%s', (_name, mapping, destinationId, expected) => {
    expect(subscriptionViolation(mapping, 2, destinationId)).toEqual(expected);
  });

  it('passes every golden export', () => {
    for (const [index, mapping] of subscriptions.publicApi.entries()) expect(subscriptionViolation(mapping, index, 'dst_any')).toBeUndefined();
  });
});

describe('settingsFromJsonText', () => {
  it("reads the Terraform provider's settings strings as the settings they hold", () => {
    expect(settingsFromJsonText(subscriptions.terraform[0].settings)).toEqual({ settings: { data: { '@path': '$.context.app' }, enable_batching: false, method: 'POST', url: 'https://hooks.example.com/app' } });
    expect(settingsFromJsonText(subscriptions.terraform[1].settings)).toMatchObject({ settings: { batch_keys: ['url', 'method', 'headers'] } });
  });

  it.each([
    ['not JSON', '{"url":', /^is a string that is not the JSON of the settings object/],
    ['a list', '[]', /^is a JSON string that does not hold an object$/],
    ['null', 'null', /^is a JSON string that does not hold an object$/],
    ['a prototype key', '{"__proto__":{"x":1}}', /^is a string that is not the JSON/],
    ['a constructor.prototype key', '{"constructor":{"prototype":{"x":1}}}', /^is a string that is not the JSON/],
    ['nested past the body limit', `${'['.repeat(65)}${']'.repeat(65)}`, /deeper than 64 levels$/],
  ])('refuses %s', (_name, text, rule) => {
    const read = settingsFromJsonText(text);
    expect('rule' in read && read.rule).toMatch(rule);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });
});

describe('pastedFilterViolation', () => {
  const route = { destinationId: 'dst_mine', sourceId: 'src_mine', filterId: 'flt_mine' };
  it.each([
    ["Segment's ids", { id: '2bT4kGhKx6YcJ3pXqS9vWn1mZaE', sourceId: 'qupCvYSjVEXpAiehzMpCtd', destinationId: '65f1c7d2e8a94b0012ab34cd' }, undefined],
    ['the route\'s own ids', { id: 'flt_mine', sourceId: 'src_mine', destinationId: 'dst_mine' }, undefined],
    ['another destination', { destinationId: 'dst_other' }, 'destinationId'],
    ['another source', { sourceId: 'src_other' }, 'sourceId'],
    ['another filter', { id: 'flt_other' }, 'id'],
  ])('%s', (_name, pasted, field) => {
    expect(pastedFilterViolation(pasted, route)?.field).toBe(field);
  });

  it('lets a POST carry any filter id: it makes a new filter', () => {
    expect(pastedFilterViolation({ id: 'flt_other' }, { destinationId: 'dst_mine', sourceId: 'src_mine' })).toBeUndefined();
  });
});
