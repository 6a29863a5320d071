import { ViolationAggregator, ViolationCap, OVERFLOW_NAME } from '../../src/plans/violation-counts';
import type { Violation } from '../../src/plans/violations';

/**
 * At most `perKey` `Violation Generated` events per (source, rule, violation type) a minute, at most
 * `perSource` per source a minute, and a bounded number of keys (forward-plan-calls.ts counts the
 * suppressed ones). The aggregator of stored counts is bounded the same way. Pure: the caller passes the time.
 */

const MINUTE = 60_000;
const T0 = Date.parse('2026-11-28T10:00:00.000Z');

type Ask = [sourceId: string, rule: string, violationType: string, atMs: number];
const same = (n: number, ask: Ask): Ask[] => Array.from({ length: n }, () => ask);

describe('the violation forwarding cap', () => {
  it.each<[string, { perKey: number; perSource?: number; maxKeys?: number }, Ask[], boolean[]]>([
    ['lets the first `perKey` of one key through in a minute, and suppresses the rest', { perKey: 2 }, same(5, ['src-a', 'Order Completed', 'Required', T0]), [true, true, false, false, false]],
    [
      'keys by violation type, not by field: many fields of one type share one key',
      { perKey: 1 },
      [
        ['src-a', 'Order Completed', 'Datatype', T0],
        ['src-a', 'Order Completed', 'Datatype', T0],
        ['src-a', 'Order Completed', 'Required', T0],
      ],
      [true, false, true],
    ],
    [
      'counts each rule on its own',
      { perKey: 1 },
      [
        ['src-a', 'Order Completed', 'Unplanned-Event', T0],
        ['src-a', 'Order Complete', 'Unplanned-Event', T0],
        ['src-a', 'Order Complete', 'Unplanned-Event', T0],
      ],
      [true, true, false],
    ],
    [
      'counts each source on its own',
      { perKey: 1 },
      [
        ['src-a', 'Order Completed', 'Required', T0],
        ['src-b', 'Order Completed', 'Required', T0],
        ['src-b', 'Order Completed', 'Required', T0],
      ],
      [true, true, false],
    ],
    [
      'bounds a source a minute whatever its keys (sender-chosen rule names)',
      { perKey: 5, perSource: 3 },
      [...['e1', 'e2', 'e3', 'e4'].map((rule): Ask => ['src-a', rule, 'Unplanned-Event', T0]), ['src-b', 'e1', 'Unplanned-Event', T0]],
      [true, true, true, false, true],
    ],
    [
      'past maxKeys, new keys share one overflow key of `perKey`',
      { perKey: 1, perSource: 100, maxKeys: 2 },
      [
        ['src-a', 'e1', 'Unplanned-Event', T0],
        ['src-a', 'e2', 'Unplanned-Event', T0],
        ['src-a', 'e3', 'Unplanned-Event', T0],
        ['src-a', 'e4', 'Unplanned-Event', T0],
      ],
      [true, true, true, false],
    ],
    [
      'starts over at the next minute, not 60 s after the first',
      { perKey: 1 },
      [
        ['src-a', 'Signed Up', 'Required', T0 + 59_999],
        ['src-a', 'Signed Up', 'Required', T0 + 59_999],
        ['src-a', 'Signed Up', 'Required', T0 + MINUTE],
        ['src-a', 'Signed Up', 'Required', T0 + MINUTE + 1],
      ],
      [true, false, true, false],
    ],
    [
      'keeps no separator ambiguity: a name ending in the next field is another key',
      { perKey: 1 },
      [
        ['src-a', 'a b', 'c', T0],
        ['src-a', 'a', 'b c', T0],
      ],
      [true, true],
    ],
  ])('%s', (_rule, { perKey, perSource, maxKeys }, asks, expected) => {
    const cap = new ViolationCap(perKey, perSource, maxKeys);
    expect(asks.map(([sourceId, rule, violationType, atMs]) => cap.allow(sourceId, rule, violationType, atMs))).toEqual(expected);
  });
});

describe('the violation aggregator', () => {
  const violation = (field: string): Violation => ({ violationType: 'Unplanned-Property', field, description: `${field} is not planned`, stage: 'unplanned-properties' });

  it('past its bound of kinds counts every new kind in one overflow row of the source and minute', () => {
    const aggregator = new ViolationAggregator(3);
    const message = { type: 'track', eventName: 'Order Completed', messageId: 'm-1' };
    aggregator.add('src-a', message, ['properties.a', 'properties.b', 'properties.c', 'properties.d', 'properties.e', 'properties.a'].map(violation), T0);
    expect(aggregator.size).toBe(4);
    const rows = aggregator.drain().counts;
    expect(rows.map((r) => [r.field, r.count])).toEqual(
      expect.arrayContaining([
        ['properties.a', 2],
        ['properties.b', 1],
        ['properties.c', 1],
        [OVERFLOW_NAME, 2],
      ]),
    );
    expect(rows.find((r) => r.field === OVERFLOW_NAME)).toMatchObject({ eventName: OVERFLOW_NAME, violationType: 'Other' });
  });

  it('keeps a bounded event name', () => {
    const aggregator = new ViolationAggregator();
    aggregator.add('src-a', { type: 'track', eventName: 'x'.repeat(30_000), messageId: 'm-1' }, [violation('event')], T0);
    const [row] = aggregator.drain().counts;
    expect(row.eventName.length).toBeLessThanOrEqual(200);
  });

  it.each([
    { name: 'one user in one minute, counted once', adds: [['src-a', ['u-1', 'anon-1'], T0], ['src-a', ['u-1'], T0]], maxKeys: 10, users: [['src-a', 'u-1'], ['src-a', 'anon-1']] },
    { name: 'each source and minute apart', adds: [['src-a', ['u-1'], T0], ['src-b', ['u-2'], T0 + 60_000]], maxKeys: 10, users: [['src-a', 'u-1'], ['src-b', 'u-2']] },
    { name: 'past the bound, a new user is any user of its bucket', adds: [['src-a', ['u-1'], T0], ['src-a', ['u-2'], T0]], maxKeys: 1, users: [['src-a', 'u-1'], ['src-a', undefined]] },
    { name: 'a call without ids records no user', adds: [['src-a', [], T0]], maxKeys: 10, users: [] },
  ] as const)('records which users a bucket counted: $name', ({ adds, maxKeys, users }) => {
    const aggregator = new ViolationAggregator(maxKeys);
    for (const [sourceId, userIds, at] of adds) aggregator.add(sourceId, { type: 'track', eventName: 'E', messageId: 'm', userIds }, [violation('event')], at);
    const batch = aggregator.drain();
    expect(batch.users.map((u) => [u.sourceId, u.userId])).toEqual(users);
    for (const user of batch.users) expect(batch.counts.some((c) => c.sourceId === user.sourceId && c.minute === user.minute)).toBe(true);
  });

  it('gives back the users of a failed write with its counts', () => {
    const aggregator = new ViolationAggregator();
    aggregator.add('src-a', { type: 'track', eventName: 'E', messageId: 'm', userIds: ['u-1'] }, [violation('event')], T0);
    aggregator.restore(aggregator.drain());
    expect(aggregator.drain().users).toEqual([{ sourceId: 'src-a', minute: Math.floor(T0 / 60_000), userId: 'u-1' }]);
  });
});
