import { ViolationCap } from '../../src/plans/violation-counts';

/**
 * At most VIOLATION_EVENTS_PER_MINUTE `Violation Generated` events per (source,
 * event, field) a minute; the rest are suppressed (forward-plan-calls.ts counts them). Pure: the
 * caller passes the time.
 */

const MINUTE = 60_000;
const T0 = Date.parse('2026-11-28T10:00:00.000Z');

type Ask = [sourceId: string, eventName: string, field: string, atMs: number];

describe('the violation forwarding cap', () => {
  it.each<[string, number, Ask[], boolean[]]>([
    ['lets the first `cap` of one key through in a minute, and suppresses the rest', 2, Array.from({ length: 5 }, (): Ask => ['src-a', 'Order Completed', 'properties.order_id', T0]), [true, true, false, false, false]],
    [
      'counts each field on its own',
      1,
      [
        ['src-a', 'Order Completed', 'properties.order_id', T0],
        ['src-a', 'Order Completed', 'properties.total', T0],
        ['src-a', 'Order Completed', 'properties.order_id', T0],
      ],
      [true, true, false],
    ],
    [
      'counts each event on its own',
      1,
      [
        ['src-a', 'Order Completed', 'event', T0],
        ['src-a', 'Order Complete', 'event', T0],
        ['src-a', 'Order Complete', 'event', T0],
      ],
      [true, true, false],
    ],
    [
      'counts each source on its own',
      1,
      [
        ['src-a', 'Order Completed', 'event', T0],
        ['src-b', 'Order Completed', 'event', T0],
        ['src-b', 'Order Completed', 'event', T0],
      ],
      [true, true, false],
    ],
    [
      'starts over at the next minute, not 60 s after the first',
      1,
      [
        ['src-a', 'Signed Up', 'event', T0 + 59_999],
        ['src-a', 'Signed Up', 'event', T0 + 59_999],
        ['src-a', 'Signed Up', 'event', T0 + MINUTE],
        ['src-a', 'Signed Up', 'event', T0 + MINUTE + 1],
      ],
      [true, false, true, false],
    ],
    [
      'keeps no separator ambiguity: a name ending in the next field is another key',
      1,
      [
        ['src-a', 'a b', 'c', T0],
        ['src-a', 'a', 'b c', T0],
      ],
      [true, true],
    ],
  ])('%s', (_rule, perMinute, asks, expected) => {
    const cap = new ViolationCap(perMinute);
    expect(asks.map(([sourceId, eventName, field, atMs]) => cap.allow(sourceId, eventName, field, atMs))).toEqual(expected);
  });
});
