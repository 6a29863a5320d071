/**
 * The message types make the seed's required fields compile-time rules. The `@ts-expect-error`
 * lines are checked by `tsc --noEmit -p .` (a line that stops being an error fails the typecheck);
 * at run time the same calls are refused by validation, which this file also shows.
 */
import { Analytics, type AliasMessage, type GroupMessage, type IdentifyMessage, type TrackMessage } from '../../../src/client';

const silent = { debug: () => {}, warn: () => {}, error: () => {} };

describe('typed messages', () => {
  const analytics = new Analytics({ writeKey: 'k', endpoint: 'http://127.0.0.1:9', logger: silent });
  afterAll(() => analytics.close({ timeout: 0 }));

  it('accept what the seed allows', () => {
    const identify: IdentifyMessage = { anonymousId: 'a1', traits: { email: 'a@example.com' } };
    const track: TrackMessage = { userId: 'u1', anonymousId: 'a1', event: 'E', timestamp: new Date(), integrations: { All: false, Webhooks: true } };
    const group: GroupMessage = { userId: 'u1', groupId: 'g1' };
    const alias: AliasMessage = { userId: 'u1', previousId: 'a1' };
    expect([identify, track, group, alias]).toHaveLength(4);
  });

  it('reject what the seed forbids, at compile time and at run time', () => {
    const refused = [
      // @ts-expect-error identify needs userId or anonymousId
      analytics.identify({ traits: {} }),
      // @ts-expect-error track needs an event name
      analytics.track({ userId: 'u1' }),
      // @ts-expect-error group needs a groupId
      analytics.group({ userId: 'u1' }),
      // @ts-expect-error alias needs previousId
      analytics.alias({ userId: 'u1' }),
      // @ts-expect-error integrations values are booleans or option objects
      analytics.track({ userId: 'u1', event: 'E', integrations: { Webhooks: 'no' } }),
    ];
    expect(refused.map((r) => r.ok)).toEqual([false, false, false, false, false]);
  });
});
