import { profileUpdatesOf as profileUpdates } from '../helpers/calls';

const received = Date.parse('2026-03-01T10:00:10.000Z');

describe('what an accepted call changes in the profiles', () => {
  it('identify merges traits, track records the event, alias links ids; page, screen and group change nothing', () => {
    const updates = profileUpdates(
      [
        { type: 'identify', raw: { userId: 'u1', anonymousId: 'a1', traits: { plan: 'pro' } } },
        { type: 'track', raw: { userId: 42, event: 'Order Completed', properties: { total: 5 }, messageId: 'm1', timestamp: '2026-03-01T09:00:00Z' } },
        { type: 'alias', raw: { userId: 'u2', previousId: 'u1' } },
        { type: 'page', raw: { userId: 'u1', name: 'Home' } },
        { type: 'screen', raw: { userId: 'u1', name: 'Home' } },
        { type: 'group', raw: { userId: 'u1', groupId: 'g' } },
      ],
      received,
    );
    expect(updates).toEqual([
      { type: 'identify', userId: 'u1', anonymousId: 'a1', traits: { plan: 'pro' } },
      { type: 'track', userId: '42', anonymousId: undefined, messageId: 'm1', event: 'Order Completed', properties: { total: 5 }, timestamp: '2026-03-01T09:00:00.000Z' },
      { type: 'alias', userId: 'u2', previousId: 'u1' },
    ]);
  });

  it('stamps an event with the same corrected timestamp the delivery uses (client clock skew)', () => {
    // The client's clock is 1 minute fast: sentAt - timestamp is trusted, its absolute time is not.
    const [track] = profileUpdates([{ type: 'track', raw: { userId: 'u', event: 'E', messageId: 'm', timestamp: '2026-03-01T10:00:50.000Z', sentAt: '2026-03-01T10:01:10.000Z' } }], received);
    expect(track).toMatchObject({ timestamp: '2026-03-01T09:59:50.000Z' });
    const [inBatch] = profileUpdates([{ type: 'track', raw: { userId: 'u', event: 'E', messageId: 'm', timestamp: '2026-03-01T10:00:50.000Z' } }], received, '2026-03-01T10:01:10.000Z');
    expect(inBatch).toMatchObject({ timestamp: '2026-03-01T09:59:50.000Z' });
  });

  it('gives a track call without messageId an id from its content, so the same call re-sent is recorded once', () => {
    const call = { type: 'track' as const, raw: { userId: 'u', event: 'E', properties: { a: 1 }, timestamp: '2026-03-01T09:00:00Z' } };
    const [first] = profileUpdates([call], received);
    const [again] = profileUpdates([call], received + 5_000);
    const [other] = profileUpdates([{ ...call, raw: { ...call.raw, properties: { a: 2 } } }], received);
    // One id for the profile row and the delivery: a UUID derived from the content.
    expect(first).toMatchObject({ messageId: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/) });
    expect((again as { messageId: string }).messageId).toBe((first as { messageId: string }).messageId);
    expect((other as { messageId: string }).messageId).not.toBe((first as { messageId: string }).messageId);
  });

  it('records the consent preferences any call carries, with its corrected timestamp; none for malformed or absent ones', () => {
    const preferences = { advertising: true, analytics: false };
    const updates = profileUpdates(
      [
        { type: 'page', raw: { userId: 'u1', name: 'Home', timestamp: '2026-03-01T09:00:00Z', context: { consent: { categoryPreferences: preferences } } } },
        { type: 'track', raw: { anonymousId: 'a1', event: 'E', messageId: 'm', timestamp: '2026-03-01T09:01:00Z', context: { consent: { categoryPreferences: {} } } } },
        { type: 'screen', raw: { userId: 'u2', name: 'S', context: { consent: { categoryPreferences: 'yes' } } } },
        { type: 'group', raw: { userId: 'u3', groupId: 'g', context: { consent: {} } } },
      ],
      received,
    );
    expect(updates.filter((u) => u.type === 'consent')).toEqual([
      { type: 'consent', userId: 'u1', anonymousId: undefined, preferences, timestamp: '2026-03-01T09:00:00.000Z', receivedAt: '2026-03-01T10:00:10.000Z' },
      { type: 'consent', userId: undefined, anonymousId: 'a1', preferences: {}, timestamp: '2026-03-01T09:01:00.000Z', receivedAt: '2026-03-01T10:00:10.000Z' },
    ]);
  });

  it('orders consent preferences dated in the future (no sentAt) at their receipt, never later', () => {
    const [consent] = profileUpdates([{ type: 'identify', raw: { userId: 'victim', traits: {}, timestamp: '2099-01-01T00:00:00Z', context: { consent: { categoryPreferences: { ads: true } } } } }], received).filter((u) => u.type === 'consent');
    expect(consent).toMatchObject({ timestamp: '2026-03-01T10:00:10.000Z' });
  });

  it('reads missing or non-object traits and properties as empty', () => {
    expect(profileUpdates([{ type: 'identify', raw: { userId: 'u', traits: ['x'] } }], received)).toEqual([{ type: 'identify', userId: 'u', anonymousId: undefined, traits: {} }]);
    expect(profileUpdates([{ type: 'track', raw: { anonymousId: 'a', event: 'E', messageId: 'm' } }], received)[0]).toMatchObject({ properties: {}, timestamp: '2026-03-01T10:00:10.000Z' });
  });
});
