import { BoundedMap } from '../../src/bounded-map';
import { OVERFLOW_NAME, ViolationAggregator } from '../../src/plans/violation-counts';

/** Every cache keyed by input holds at most its stated bound, whatever senders choose to send. */
describe('BoundedMap', () => {
  it('holds at most its bound, dropping the least recently used', () => {
    const evicted: string[] = [];
    const map = new BoundedMap<string, number>(3, (key) => evicted.push(key));
    for (const key of ['a', 'b', 'c']) map.set(key, 1);
    map.get('a');
    map.set('d', 1);
    expect([...map].map(([key]) => key)).toEqual(['c', 'a', 'd']);
    expect(evicted).toEqual(['b']);
    for (let i = 0; i < 10_000; i++) map.set(`k${i}`, i);
    expect(map.size).toBe(3);
  });

  it('refuses a bound below one', () => {
    expect(() => new BoundedMap(0)).toThrow(RangeError);
  });
});

it('the violation aggregator counts fields past its bound under one overflow row, losing no count', () => {
  const aggregator = new ViolationAggregator();
  const at = Date.UTC(2026, 0, 1);
  const message = { type: 'track', eventName: 'Order Completed', messageId: 'm' };
  const violations = Array.from({ length: 12_000 }, (_, i) => ({ violationType: 'Datatype' as const, field: `properties.n${i}`, description: 'd', stage: 'rule-violations' as const }));
  aggregator.add('src_1', message, violations, at);
  expect(aggregator.size).toBe(10_001);
  const rows = aggregator.drain().counts;
  expect(rows.reduce((sum, row) => sum + row.count, 0)).toBe(12_000);
  expect(rows.find((row) => row.field === OVERFLOW_NAME)?.count).toBe(2_000);
});
