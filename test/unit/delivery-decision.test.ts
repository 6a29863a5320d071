import type { MessageBody } from '../../src/delivery/types';
import { DEFAULT_CONSENT, type ConsentSettings } from '../../src/rules/consent';
import { DELIVERY_RULES, decideDelivery, type DeliveryDecisionInput } from '../../src/rules/delivery-decision';
import { compileFilter, type CompiledFilter, type FilterSettings } from '../../src/rules/destination-filters';
import { compileTransformation, type CompiledTransformation, type TransformationRules } from '../../src/rules/transformations';

function filter(id: string, settings: Pick<FilterSettings, 'if' | 'actions'>): CompiledFilter {
  const result = compileFilter(id, { title: id, enabled: true, ...settings });
  if (!result.ok) throw new Error(JSON.stringify(result.error));
  return result.filter;
}

const body = (consent?: unknown): MessageBody => ({
  version: 1,
  type: 'track',
  messageId: 'msg-1',
  userId: 'u1',
  event: 'Order Completed',
  properties: { email: 'a@example.com', total: 3 },
  context: consent === undefined ? {} : { consent: { categoryPreferences: consent } },
});

const ads: ConsentSettings = { categories: ['Advertising'], whenAbsent: 'deliver' };
const dropOrders = filter('df_drop', { if: "event = 'Order Completed'", actions: [{ type: 'DROP' }] });
const sampleAll = filter('df_sample', { if: 'all', actions: [{ type: 'SAMPLE', percent: 0 }] });
const stripEmail = filter('df_pii', { if: 'all', actions: [{ type: 'DROP_PROPERTIES', fields: { properties: ['email'] } }] });

function input(change: Partial<Omit<DeliveryDecisionInput, 'destination'>> & { destination?: Partial<DeliveryDecisionInput['destination']> }): DeliveryDecisionInput {
  return {
    body: body(),
    integrations: undefined,
    suppressed: false,
    ...change,
    destination: { consent: DEFAULT_CONSENT, filters: [], ...change.destination },
  };
}

describe('decideDelivery: one decision per (message, destination), the first rule that stops it', () => {
  it('lists its rules in order: the plan first, source-scoped transformations before and destination-scoped ones after the filters, consent before integrations (Segment\'s reconciliation table)', () => {
    expect(DELIVERY_RULES.map((rule) => rule.name)).toEqual(['plan', 'source transformations', 'consent', 'integrations', 'suppression', 'filters', 'destination transformations']);
  });

  it('stops a message the source\'s tracking plan blocked under `plan`, before any other rule', () => {
    expect(decideDelivery(input({ planBlocked: true, suppressed: true, integrations: { Webhooks: false } }))).toEqual({ stop: 'plan' });
  });

  it.each<[string, DeliveryDecisionInput, unknown]>([
    ['nothing in the way: the body as it came', input({}), { send: body() }],
    ['integrations off', input({ integrations: { Webhooks: false } }), { stop: 'integrations' }],
    ['All: false', input({ integrations: { All: false } }), { stop: 'integrations' }],
    ['integrations on by name', input({ integrations: { All: false, Webhooks: true } }), { send: body() }],
    ['consent refused', input({ body: body({ Advertising: false }), destination: { consent: ads } }), { stop: 'consent' }],
    [
      'consent refused wins over an integrations key that turns the destination on',
      input({ body: body({ Advertising: false }), integrations: { Webhooks: true }, destination: { consent: ads } }),
      { stop: 'consent' },
    ],
    [
      'consent refused and integrations off: counted under consent',
      input({ body: body({}), integrations: { Webhooks: false }, destination: { consent: ads } }),
      { stop: 'consent' },
    ],
    [
      'consent granted, integrations off: integrations',
      input({ body: body({ Advertising: true }), integrations: { Webhooks: false }, destination: { consent: ads } }),
      { stop: 'integrations' },
    ],
    ['a suppressed user', input({ suppressed: true }), { stop: 'suppressed' }],
    ['suppressed and integrations off: integrations first', input({ suppressed: true, integrations: { All: false } }), { stop: 'integrations' }],
    ['suppressed and matching a DROP filter: suppressed first', input({ suppressed: true, destination: { filters: [dropOrders] } }), { stop: 'suppressed' }],
    ['a DROP filter', input({ destination: { filters: [dropOrders] } }), { stop: 'filters', filterId: 'df_drop' }],
    ['sampled out', input({ destination: { filters: [dropOrders, sampleAll] } }), { stop: 'sampled', filterId: 'df_sample' }],
    [
      'a property filter: sent without the property',
      input({ destination: { filters: [stripEmail] } }),
      { send: { ...body(), properties: { total: 3 } } },
    ],
    ['the integrations name is the destination\'s', input({ integrations: { Webhooks: false }, destination: { integrationName: 'Orders hook' } }), { send: body() }],
  ])('%s', (_, decisionInput, decision) => {
    expect(decideDelivery(decisionInput)).toEqual(decision);
  });

  describe('"Segment Consent Preference Updated" is sent regardless of the consent it reports (Segment, Consent in Unify)', () => {
    const change = (preferences: unknown): MessageBody => ({ ...body(preferences), event: 'Segment Consent Preference Updated' });
    const dropAll = filter('df_all', { if: 'all', actions: [{ type: 'DROP' }] });
    it.each<[string, DeliveryDecisionInput, unknown]>([
      ['reaches a destination whose category it revokes', input({ body: change({ Advertising: false }), destination: { consent: ads } }), { send: change({ Advertising: false }) }],
      ['reaches a destination that drops messages without preferences', input({ body: change({}), destination: { consent: { categories: ['Advertising'], whenAbsent: 'drop' } } }), { send: change({}) }],
      ['any other event with the same denial still stops at consent', input({ body: body({ Advertising: false }), destination: { consent: ads } }), { stop: 'consent' }],
      [
        'a page named like it is not the consent change',
        input({ body: { ...change({ Advertising: false }), type: 'page' }, destination: { consent: ads } }),
        { stop: 'consent' },
      ],
      ['integrations still apply', input({ body: change({ Advertising: false }), integrations: { Webhooks: false }, destination: { consent: ads } }), { stop: 'integrations' }],
      ['suppression still applies', input({ body: change({ Advertising: false }), suppressed: true, destination: { consent: ads } }), { stop: 'suppressed' }],
      ['filters still apply', input({ body: change({ Advertising: false }), destination: { consent: ads, filters: [dropAll] } }), { stop: 'filters', filterId: 'df_all' }],
    ])('%s', (_, decisionInput, decision) => {
      expect(decideDelivery(decisionInput)).toEqual(decision);
    });
  });

  describe("transformations in Segment's order: source-scoped before the filters, destination-scoped after them", () => {
    const transformation = (id: string, rules: Partial<TransformationRules>): CompiledTransformation => {
      const result = compileTransformation(id, { name: id, enabled: true, if: 'all', ...rules });
      if (!result.ok) throw new Error(JSON.stringify(result.error));
      return result.transformation;
    };
    const rename = transformation('tfm_rename', { if: "event = 'Order Completed'", newEventName: 'Purchase' });
    const dropPurchases = filter('df_purchase', { if: "event = 'Purchase'", actions: [{ type: 'DROP' }] });
    const dropRenamed = transformation('tfm_drop', { if: "event = 'Purchase'", drop: true });
    const scoped = (source: CompiledTransformation[], destination: CompiledTransformation[]) => ({ transformations: { source, destination } });
    it.each<[string, DeliveryDecisionInput, unknown]>([
      ['a source-scoped rename is what the filters see', input({ destination: { filters: [dropPurchases], ...scoped([rename], []) } }), { stop: 'filters', filterId: 'df_purchase' }],
      [
        'a destination-scoped rename comes after the filters, on what they left',
        input({ destination: { filters: [dropPurchases, stripEmail], ...scoped([], [rename]) } }),
        { send: { ...body(), event: 'Purchase', properties: { total: 3 } }, transformed: ['tfm_rename'] },
      ],
      ['a drop stops the message under transformation, by its id', input({ destination: scoped([rename], [dropRenamed]) }), { stop: 'transformation', filterId: 'tfm_drop' }],
      ['the plan still comes first', input({ planBlocked: true, destination: scoped([transformation('tfm_all', { drop: true })], []) }), { stop: 'plan' }],
    ])('%s', (_, decisionInput, decision) => {
      expect(decideDelivery(decisionInput)).toEqual(decision);
    });
  });

  it('never changes the body it is given', () => {
    const given = input({ destination: { filters: [stripEmail] } });
    decideDelivery(given);
    expect(given.body).toEqual(body());
  });
});
