import { applyCase } from '../../src/rules/fql-property';
import { applyTransformations, compileTransformation, type CompiledTransformation, type TransformationRules } from '../../src/rules/transformations';

/** Segment Protocols Transformations as a pure function: what each field does to one message, and what a save refuses. */

function compiled(id: string, rules: Partial<TransformationRules>): CompiledTransformation {
  const result = compileTransformation(id, { name: id, enabled: true, if: 'all', ...rules });
  if (!result.ok) throw new Error(JSON.stringify(result.error));
  return result.transformation;
}

const track = {
  type: 'track',
  messageId: 'm1',
  userId: 'u1',
  event: 'order_completed',
  properties: { order_id: 'o-7', total: 30, city: 'new york', order: { id: 'nested' }, email: 'a@example.com' },
  context: { ip: '203.0.113.7' },
};
const identify = { type: 'identify', messageId: 'm2', userId: 'u1', traits: { FirstName: 'Ada', plan: 'pro' } };

describe('applyTransformations: one transformation on one message', () => {
  it.each<[string, Record<string, unknown>, Partial<TransformationRules>, unknown]>([
    ['renames a property of a track, relative to properties', track, { propertyRenames: [{ oldName: 'order_id', newName: 'orderId' }] }, { properties: { ...withoutKey(track.properties, 'order_id'), orderId: 'o-7' } }],
    ['renames a trait of an identify, relative to traits', identify, { propertyRenames: [{ oldName: 'FirstName', newName: 'first_name' }] }, { traits: { plan: 'pro', first_name: 'Ada' } }],
    ['reads traits.FirstName as the absolute path it is', identify, { propertyRenames: [{ oldName: 'traits.FirstName', newName: 'traits.firstName' }] }, { traits: { plan: 'pro', firstName: 'Ada' } }],
    ['moves a nested property out of its object (JSON path)', track, { propertyRenames: [{ oldName: 'order.id', newName: 'orderRef' }] }, { properties: { ...track.properties, order: {}, orderRef: 'nested' } }],
    [
      'swaps two names: every value is read from the message before the transformation',
      track,
      { propertyRenames: [{ oldName: 'order_id', newName: 'city' }, { oldName: 'city', newName: 'order_id' }] },
      { properties: { ...track.properties, order_id: 'new york', city: 'o-7' } },
    ],
    ['sets static values at absolute paths, making the objects on the way', track, { propertyValueTransformations: [{ propertyPaths: ['properties.currency', 'context.app.name'], propertyValue: 'USD' }] }, { properties: { ...track.properties, currency: 'USD' }, context: { ip: '203.0.113.7', app: { name: 'USD' } } }],
    ['keeps only the allowed properties', track, { allowProperties: ['order_id', 'total'] }, { properties: { order_id: 'o-7', total: 30 } }],
    ['renames a track event', track, { newEventName: 'Order Completed' }, { event: 'Order Completed' }],
    ['computes a property with lowercase/snakecase/titlecase of a field', track, { fqlDefinedProperties: [{ fql: 'titlecase(properties.city)', propertyName: 'properties.city_title' }] }, { properties: { ...track.properties, city_title: 'New York' } }],
    ['computes a property from a quoted string', track, { fqlDefinedProperties: [{ fql: 'snakecase("Order Completed")', propertyName: 'properties.kind' }] }, { properties: { ...track.properties, kind: 'order_completed' } }],
  ])('%s', (_, event, rules, change) => {
    const before = structuredClone(event);
    const outcome = applyTransformations(event, [compiled('tfm_1', rules)]);
    expect(outcome).toEqual({ send: { ...event, ...(change as object) }, changedBy: ['tfm_1'] });
    expect(event).toEqual(before);
  });

  it.each<[string, Record<string, unknown>, Partial<TransformationRules>]>([
    ['an if the message does not meet', track, { if: "event = 'Signed Up'", newEventName: 'X' }],
    ['newEventName on an identify (track only)', identify, { newEventName: 'X' }],
    ['a rename of a property the message does not have', track, { propertyRenames: [{ oldName: 'missing', newName: 'other' }] }],
    ['a value it already has', track, { propertyValueTransformations: [{ propertyPaths: ['properties.order_id'], propertyValue: 'o-7' }] }],
    ['an fql property of a field that is not a string', track, { fqlDefinedProperties: [{ fql: 'uppercase(properties.total)', propertyName: 'properties.t' }] }],
  ])('leaves the message as it is (the same object, not counted as a change): %s', (_, event, rules) => {
    expect(applyTransformations(event, [compiled('tfm_1', rules)])).toEqual({ send: event, changedBy: [] });
    const outcome = applyTransformations(event, [compiled('tfm_1', rules)]);
    expect('send' in outcome && outcome.send).toBe(event);
  });

  it('drops a matching message, ignoring its other transforms, under its id', () => {
    const drop = compiled('tfm_drop', { if: "event = 'order_completed'", drop: true, newEventName: 'X' });
    expect(applyTransformations(track, [compiled('tfm_first', { newEventName: 'Order Completed' }), drop])).toEqual({ send: { ...track, event: 'Order Completed' }, changedBy: ['tfm_first'] });
    expect(applyTransformations(track, [drop, compiled('tfm_after', { newEventName: 'Y' })])).toEqual({ drop: 'tfm_drop' });
  });

  it('runs in saved order, each matched against the message as the one before left it; a switched-off one does nothing', () => {
    const rename = compiled('tfm_a', { newEventName: 'Order Completed' });
    const afterRename = compiled('tfm_b', { if: "event = 'Order Completed'", propertyValueTransformations: [{ propertyPaths: ['properties.currency'], propertyValue: 'EUR' }] });
    const off = { ...compiled('tfm_off', { drop: true }), enabled: false };
    expect(applyTransformations(track, [rename, off, afterRename])).toEqual({ send: { ...track, event: 'Order Completed', properties: { ...track.properties, currency: 'EUR' } }, changedBy: ['tfm_a', 'tfm_b'] });
  });

  it.each([
    ['lowercase', 'New York', 'new york'],
    ['uppercase', 'New York', 'NEW YORK'],
    ['snakecase', 'orderCompleted now', 'order_completed_now'],
    ['kebabcase', 'Order Completed', 'order-completed'],
    ['titlecase', 'united STATES', 'United States'],
  ] as const)('%s(%j) is %j', (fn, input, output) => {
    expect(applyCase(fn, input)).toBe(output);
  });
});

describe('compileTransformation: a save refuses what cannot run, naming the field and the rule', () => {
  it.each<[string, Partial<TransformationRules>, string, RegExp]>([
    ['an if that does not parse', { if: "event = 'X' and", newEventName: 'Y' }, 'if', /^at column 16: /],
    ['nothing to do', {}, 'transformation', /needs drop, newEventName/],
    ['fqlDefinedProperties beside renames', { fqlDefinedProperties: [{ fql: 'lowercase(event)', propertyName: 'properties.e' }], propertyRenames: [{ oldName: 'a', newName: 'b' }] }, 'fqlDefinedProperties', /cannot be combined/],
    ['an fql outside the five case functions', { fqlDefinedProperties: [{ fql: 'length(event)', propertyName: 'properties.e' }] }, 'fqlDefinedProperties[0].fql', /at column 1: expected one of lowercase, uppercase, snakecase, kebabcase, titlecase/],
    ['a path set twice', { propertyValueTransformations: [{ propertyPaths: ['properties.a'], propertyValue: 'x' }, { propertyPaths: ['properties.a'], propertyValue: 'y' }] }, 'propertyValueTransformations[1].propertyPaths[0]', /is set twice/],
    ['a path both renamed and set', { propertyRenames: [{ oldName: 'a', newName: 'b' }], propertyValueTransformations: [{ propertyPaths: ['properties.b'], propertyValue: 'x' }] }, 'propertyValueTransformations[0].propertyPaths[0]', /also renamed/],
    ['more than 10 value paths', { propertyValueTransformations: [{ propertyPaths: Array.from({ length: 11 }, (_, i) => `properties.p${i}`), propertyValue: 'x' }] }, 'propertyValueTransformations', /at most 10 paths/],
    ['a rename more than 4 levels deep', { propertyRenames: [{ oldName: 'a.b.c.d.e', newName: 'x' }] }, 'propertyRenames[0].oldName', /more than 4 levels deep/],
    ['a path into an array', { propertyRenames: [{ oldName: 'products.$.id', newName: 'x' }] }, 'propertyRenames[0].oldName', /array/],
    ['a path into a prototype', { allowProperties: ['constructor.prototype'] }, 'allowProperties[0]', /forbidden segment "constructor"/],
    ['setting messageId', { propertyValueTransformations: [{ propertyPaths: ['messageId'], propertyValue: 'x' }] }, 'propertyValueTransformations[0].propertyPaths[0]', /type and messageId/],
  ])('%s', (_, rules, field, message) => {
    const result = compileTransformation('t', { name: 't', enabled: true, if: 'all', ...rules });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error.field).toBe(field);
      expect(result.error.message).toMatch(message);
    }
  });
});

function withoutKey(object: Record<string, unknown>, key: string): Record<string, unknown> {
  const { [key]: _gone, ...rest } = object;
  return rest;
}
