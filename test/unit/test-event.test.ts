import fc from 'fast-check';
import { STOP_REASONS } from '../../src/delivery/stop-reasons';
import { SAMPLE_TEST_EVENT, stoppedBy, testCall } from '../../src/messages/test-event';

/** A destination's test event: which events it takes (a 400's words name the field under `event.`), and how a stop reads. */
describe('testCall', () => {
  it.each<[string, Record<string, unknown> | undefined, string | { type: string }]>([
    ['no event: the sample track', undefined, { type: 'track' }],
    ['an identify', { type: 'identify', userId: 'u1', traits: { plan: 'pro' } }, { type: 'identify' }],
    ['an unknown type', { type: 'purchase', userId: 'u1' }, 'event.type: must be one of identify, track, page, screen, group, alias'],
    ['no type', { userId: 'u1' }, 'event.type: must be one of identify, track, page, screen, group, alias'],
    ['a delete (Switchyard sends those itself)', { type: 'delete', userId: 'u1' }, 'event.type: must be one of identify, track, page, screen, group, alias'],
    ['a track without its event', { type: 'track', userId: 'u1' }, 'event.event: is required for track calls'],
    ['no user', { type: 'page', name: 'Home' }, 'event.userId: userId or anonymousId is required for page calls'],
    ['one over 32 KB', { type: 'track', event: 'x', userId: 'u', properties: { blob: 'x'.repeat(40_000) } }, 'event: is 40051 bytes; a message may be at most 32768 bytes (32 KB)'],
    ['a bad timestamp', { type: 'track', event: 'x', anonymousId: 'a', timestamp: 'yesterday' }, 'event.timestamp: must be an ISO 8601 date-time with a time zone, e.g. 2026-01-31T12:00:00.000Z'],
  ])('%s', (_, event, expected) => {
    const call = testCall(event);
    if (typeof expected === 'string') expect(call).toEqual({ problem: expected });
    else expect(call).toMatchObject(expected);
  });

  it("drops the event's own messageId, so every test is a delivery of its own", () => {
    expect(testCall({ type: 'track', event: 'x', userId: 'u', messageId: 'old-1' })).toEqual({ type: 'track', fields: { event: 'x', userId: 'u' } });
    expect(testCall()).toEqual({ type: 'track', fields: { event: SAMPLE_TEST_EVENT.event, userId: SAMPLE_TEST_EVENT.userId, properties: SAMPLE_TEST_EVENT.properties } });
  });
});

describe('stoppedBy', () => {
  it.each([
    ['filters', 'Drop staff', 'filtered by filter "Drop staff"'],
    ['filters', undefined, 'filtered by filter'],
    ['sampled', 'Keep 10%', 'sampled out by filter "Keep 10%"'],
    ['transformation', 'Strip PII', 'dropped by transformation "Strip PII"'],
    ['trigger', undefined, "filtered by trigger: no enabled mapping's trigger matches the event"],
  ] as const)('%s %s', (stop, name, words) => {
    expect(stoppedBy(stop, name)).toBe(words);
  });

  it('has words for every stop reason', () => {
    for (const stop of STOP_REASONS) expect(stoppedBy(stop)).toMatch(/^(filtered|sampled|dropped|blocked) /);
  });
});

describe('any event a user sends', () => {
  const SEED = process.env.FC_SEED !== undefined ? Number(process.env.FC_SEED) : process.env.CI ? 5353 : Date.now() % 2 ** 31;
  beforeAll(() => console.log(`test-event property test: FC_SEED=${SEED} replays this run`));

  it('is a call or a problem naming a field under event., never a throw (a 400, never a 500)', () => {
    const fields = fc.dictionary(fc.oneof(fc.constantFrom('type', 'userId', 'anonymousId', 'event', 'timestamp', 'groupId', 'previousId', 'messageId'), fc.string()), fc.jsonValue(), { maxKeys: 8 });
    const typed = fc.tuple(fields, fc.oneof(fc.constantFrom('track', 'identify', 'page', 'screen', 'group', 'alias', 'delete'), fc.jsonValue())).map(([event, type]) => ({ ...event, type }));
    fc.assert(
      fc.property(fc.oneof(fields, typed), (event) => {
        const call = testCall(event);
        if ('problem' in call) expect(call.problem).toMatch(/^event(\.[A-Za-z]+)*: /);
        else expect(call.fields).not.toHaveProperty('messageId');
      }),
      { seed: SEED, numRuns: 300 },
    );
  });
});
