import type { MessageBody } from '../../src/delivery/types';
import { withArchivedOmissions } from '../../src/messages/archived-omissions';
import { archivedVerdict } from '../../src/messages/plan-calls';

/** A replay never undoes an omission: the names omitted at ingest are kept with the archived call and left out again. */
describe('withArchivedOmissions', () => {
  const body: MessageBody = {
    type: 'track',
    messageId: 'm',
    userId: 'u',
    event: 'E',
    properties: { order_id: 'o-1', coupon: 'C', 'card.number': '4111', 'a/b': 'x' },
    context: { protocols: { event_version: 2 } },
  };

  it.each([
    ['nothing omitted', undefined, body.properties, undefined],
    ['an empty list', [], body.properties, undefined],
    ['a property', ['properties.coupon'], { order_id: 'o-1', 'card.number': '4111', 'a/b': 'x' }, ['properties.coupon']],
    ['names holding a dot and a slash', ['properties.card.number', 'properties.a/b'], { order_id: 'o-1', coupon: 'C' }, ['properties.card.number', 'properties.a/b']],
    ['a name no longer present', ['properties.gone'], body.properties, ['properties.gone']],
    ['a trait of a track (another section)', ['traits.age'], body.properties, ['traits.age']],
  ])('%s', (_, omitted, properties, listed) => {
    const out = withArchivedOmissions(body, omitted);
    expect(out.properties).toEqual(properties);
    if (listed === undefined) expect(out).toBe(body);
    else expect(out.context).toEqual({ protocols: { event_version: 2, omitted: listed } });
  });

  it("keeps what today's plan omitted first, each name once, and never changes its input", () => {
    const today: MessageBody = { ...body, properties: { order_id: 'o-1', 'card.number': '4111' }, context: { protocols: { omitted: ['properties.coupon'] } } };
    const out = withArchivedOmissions(today, ['properties.coupon', 'properties.card.number']);
    expect(out.properties).toEqual({ order_id: 'o-1' });
    expect(out.context).toEqual({ protocols: { omitted: ['properties.coupon', 'properties.card.number'] } });
    expect(today.properties).toEqual({ order_id: 'o-1', 'card.number': '4111' });
  });

  it('omits traits of an identify', () => {
    const identify: MessageBody = { type: 'identify', messageId: 'm', userId: 'u', traits: { age: 40, plan: 'pro' }, context: {} };
    expect(withArchivedOmissions(identify, ['traits.age']).traits).toEqual({ plan: 'pro' });
  });
});

describe('archivedVerdict', () => {
  it('keeps the omitted names with the archived call, and adds nothing when none were', () => {
    const body: MessageBody = { type: 'track', messageId: 'm', event: 'E', properties: {}, context: {} };
    expect(archivedVerdict({ status: 'omitted', decidedBy: 'unplanned-properties', violations: [], omitted: ['properties.coupon'], body })).toEqual({ status: 'omitted', decidedBy: 'unplanned-properties', violations: [], omitted: ['properties.coupon'] });
    expect(archivedVerdict({ status: 'passed', violations: [], omitted: [], body })).toEqual({ status: 'passed', violations: [] });
  });
});
