import golden from '../fixtures/segment-fql/destination-filters.json';
import {
  applyFilters,
  compileFilter,
  filterCountError,
  type CompiledFilter,
  type FilterOutcome,
  type FilterSettings,
} from '../../src/rules/destination-filters';

interface GoldenMessage {
  message: Record<string, unknown>;
  delivered: boolean;
  body?: Record<string, unknown>;
}

/** The body a kept message is sent with (fails the test if it was stopped). */
function sent(outcome: FilterOutcome): Record<string, any> {
  if (!('send' in outcome)) throw new Error(`stopped: ${JSON.stringify(outcome)}`);
  return outcome.send;
}

function compiled(id: string, settings: Partial<FilterSettings> & Pick<FilterSettings, 'if' | 'actions'>): CompiledFilter {
  const result = compileFilter(id, { title: id, enabled: true, ...settings });
  if (!result.ok) throw new Error(JSON.stringify(result.error));
  return result.filter;
}

const order = {
  type: 'track',
  messageId: 'msg-1',
  event: 'Order Completed',
  userId: 'u1',
  properties: { total: 30, email: 'a@example.com', coupon: 'X', products: [{ sku: 's1', price: 1 }, { sku: 's2', price: 2 }] },
  context: { ip: '10.0.0.1', library: { name: 'analytics.js' } },
};

describe('destination filter golden examples (segment-docs)', () => {
  for (const { doc, filter, messages } of golden.cases) {
    it.each(messages as GoldenMessage[])(`${doc}: %j`, ({ message, delivered, body }) => {
      const outcome = applyFilters(message, [compiled('df_1', filter as FilterSettings)]);
      expect('send' in outcome).toBe(delivered);
      if ('send' in outcome) expect(outcome.send).toEqual(body);
    });
  }
});

describe('applyFilters', () => {
  it('sends the message unchanged when no enabled filter matches', () => {
    const outcome = applyFilters(order, [
      compiled('df_a', { if: "event = 'Signed Up'", actions: [{ type: 'DROP' }] }),
      compiled('df_b', { if: 'all', enabled: false, actions: [{ type: 'DROP' }] }),
    ]);
    expect(outcome).toEqual({ send: order, matched: [] });
  });

  it('drops a matching message, naming the filter', () => {
    const outcome = applyFilters(order, [compiled('df_drop', { if: "event = 'Order Completed'", actions: [{ type: 'DROP' }] })]);
    expect(outcome).toMatchObject({ stop: 'filters', filterId: 'df_drop' });
  });

  it('an "only send" filter is a DROP of !(condition)', () => {
    const onlySignups = [compiled('df_only', { if: "!(event = 'Signed Up')", actions: [{ type: 'DROP' }] })];
    expect(applyFilters(order, onlySignups)).toMatchObject({ stop: 'filters' });
    expect(applyFilters({ ...order, event: 'Signed Up' }, onlySignups)).toHaveProperty('send');
  });

  it('drops properties per top-level object, and top-level fields under ""', () => {
    const outcome = applyFilters(order, [
      compiled('df_pii', { if: 'all', actions: [{ type: 'DROP_PROPERTIES', fields: { properties: ['email'], context: ['ip'], '': ['userId'] } }] }),
    ]);
    expect(outcome).toHaveProperty('send');
    const body = sent(outcome);
    expect(body.userId).toBeUndefined();
    expect(body.properties).toEqual({ total: 30, coupon: 'X', products: order.properties.products });
    expect(body.context).toEqual({ library: { name: 'analytics.js' } });
  });

  it('drops a property from every object of an array (Segment FAQ: properties.products.price)', () => {
    const outcome = applyFilters(order, [compiled('df_arr', { if: 'all', actions: [{ type: 'DROP_PROPERTIES', fields: { 'properties.products': ['price'] } }] })]);
    expect(sent(outcome).properties.products).toEqual([{ sku: 's1' }, { sku: 's2' }]);
  });

  it('allows only the listed properties', () => {
    const outcome = applyFilters(order, [compiled('df_allow', { if: 'all', actions: [{ type: 'ALLOW_PROPERTIES', fields: { properties: ['total'] } }] })]);
    expect(sent(outcome).properties).toEqual({ total: 30 });
  });

  it('never changes the message it is given', () => {
    const before = structuredClone(order);
    applyFilters(order, [compiled('df_pii', { if: 'all', actions: [{ type: 'DROP_PROPERTIES', fields: { properties: ['email'] } }] })]);
    expect(order).toEqual(before);
  });

  it('evaluates every condition on the message as received, not as an earlier filter left it', () => {
    const outcome = applyFilters(order, [
      compiled('df_strip', { if: 'all', actions: [{ type: 'DROP_PROPERTIES', fields: { properties: ['email'] } }] }),
      compiled('df_internal', { if: "contains(properties.email, '@example.com')", actions: [{ type: 'DROP' }] }),
    ]);
    expect(outcome).toMatchObject({ stop: 'filters', filterId: 'df_internal' });
  });

  it('applies actions in Segment\'s order: sample, drop, drop properties, allow properties, whatever the filters\' order', () => {
    const filters = [
      compiled('df_allow', { if: 'all', actions: [{ type: 'ALLOW_PROPERTIES', fields: { properties: ['email', 'total'] } }] }),
      compiled('df_dropprops', { if: 'all', actions: [{ type: 'DROP_PROPERTIES', fields: { properties: ['email'] } }] }),
      compiled('df_drop', { if: 'properties.total > 100', actions: [{ type: 'DROP' }] }),
      compiled('df_sample', { if: 'all', actions: [{ type: 'SAMPLE', percent: 0 }, { type: 'DROP' }] }),
    ];
    // Sampling comes first: percent 0 stops it as sampled, although a DROP of the same filter also matched.
    expect(applyFilters(order, filters)).toMatchObject({ stop: 'sampled', filterId: 'df_sample' });
    const kept = applyFilters(order, filters.slice(0, 3));
    expect(sent(kept).properties).toEqual({ total: 30 });
    expect((kept as { matched: CompiledFilter[] }).matched.map((filter) => filter.id)).toEqual(['df_allow', 'df_dropprops']);
  });

  it('samples deterministically on the message id by default: about percent of messages, the same answer on a re-send', () => {
    const sample = [compiled('df_sample', { if: 'all', actions: [{ type: 'SAMPLE', percent: 0.5 }] })];
    const decisions = Array.from({ length: 1000 }, (_, n) => 'send' in applyFilters({ ...order, messageId: `m-${n}` }, sample));
    const kept = decisions.filter(Boolean).length;
    expect(kept).toBeGreaterThanOrEqual(450);
    expect(kept).toBeLessThanOrEqual(550);
    const again = Array.from({ length: 1000 }, (_, n) => 'send' in applyFilters({ ...order, messageId: `m-${n}` }, sample));
    expect(again).toEqual(decisions);
  });

  it('samples on the value at path when one is given, so one user is all in or all out', () => {
    const sample = [compiled('df_sample', { if: 'all', actions: [{ type: 'SAMPLE', percent: 0.5, path: 'userId' }] })];
    for (const userId of ['u1', 'u2', 'u3', 'u4']) {
      const answers = new Set(Array.from({ length: 20 }, (_, n) => 'send' in applyFilters({ ...order, userId, messageId: `m-${n}` }, sample)));
      expect(answers.size).toBe(1);
    }
  });

  it.each([
    [0, false],
    [1, true],
  ])('SAMPLE percent %d keeps %s', (percent, kept) => {
    const sample = [compiled('df_sample', { if: 'all', actions: [{ type: 'SAMPLE', percent }] })];
    expect('send' in applyFilters(order, sample)).toBe(kept);
  });
});

describe('compileFilter validation names the field, the rule and for FQL the column', () => {
  const valid: FilterSettings = { title: 'No internal', enabled: true, if: 'all', actions: [{ type: 'DROP' }] };
  it.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    ['bad FQL', { if: "event = 'X' and" }, { field: 'if', rule: 'unexpected-token', position: 16 }],
    ['unknown action', { actions: [{ type: 'DROP' }, { type: 'HASH' }] }, { field: 'actions[1].type', rule: 'unknown-action' }],
    ['percent above 1', { actions: [{ type: 'SAMPLE', percent: 1.5 }] }, { field: 'actions[0].percent', rule: 'out-of-range' }],
    ['percent below 0', { actions: [{ type: 'SAMPLE', percent: -0.1 }] }, { field: 'actions[0].percent', rule: 'out-of-range' }],
    ['percent missing', { actions: [{ type: 'SAMPLE' }] }, { field: 'actions[0].percent', rule: 'out-of-range' }],
    ['fields not a map of lists', { actions: [{ type: 'DROP_PROPERTIES', fields: { properties: 'email' } }] }, { field: 'actions[0].fields', rule: 'invalid-fields' }],
    ['empty fields', { actions: [{ type: 'ALLOW_PROPERTIES', fields: {} }] }, { field: 'actions[0].fields', rule: 'invalid-fields' }],
    ['no actions', { actions: [] }, { field: 'actions', rule: 'required' }],
    ['empty title', { title: ' ' }, { field: 'title', rule: 'required' }],
    ['long title', { title: 'x'.repeat(65) }, { field: 'title', rule: 'too-long' }],
  ])('%s', (_, change, error) => {
    const result = compileFilter('df_x', { ...valid, ...change });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatchObject(error);
  });

  it('accepts every action in Segment\'s Public API shape', () => {
    const result = compileFilter('df_x', {
      ...valid,
      actions: [
        { type: 'SAMPLE', percent: 0.1, path: 'userId' },
        { type: 'DROP' },
        { type: 'DROP_PROPERTIES', fields: { properties: ['email'], '': ['userId'] } },
        { type: 'ALLOW_PROPERTIES', fields: { context: ['library'] } },
      ],
    });
    expect(result.ok).toBe(true);
  });

  it('a destination takes at most 10 filters', () => {
    expect(filterCountError(9)).toBeUndefined();
    expect(filterCountError(10)).toMatchObject({ field: 'filters', rule: 'too-many-filters' });
  });
});
