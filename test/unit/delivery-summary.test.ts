import { attemptSummary, deliveryDetails, deliverySummary, webhookLabel } from '../../src/delivery/summary';
import type { DeliveryInput } from '../../src/delivery/types';

const input = (type: DeliveryInput['type'], message: Record<string, unknown>, userId: string | undefined, destinations = 2) => ({
  type,
  userId,
  destinationIds: Array.from({ length: destinations }, (_, i) => `dst_${i}`),
  message: { type, ...message } as DeliveryInput['message'],
});

describe('delivery workflow summary (Temporal Web UI)', () => {
  it.each([
    ['track names its event', input('track', { event: 'Order Completed', properties: { total: 42, email: 'a@b.c' } }, 'u1'), 'track · Order Completed · user u1 → 2 destinations'],
    ['page names its page', input('page', { name: 'Pricing', properties: { url: 'https://x/?token=1' } }, 'u1', 1), 'page · Pricing · user u1 → 1 destination'],
    ['screen names its screen', input('screen', { name: 'Home' }, 'u2'), 'screen · Home · user u2 → 2 destinations'],
    ['identify shows no traits', input('identify', { traits: { email: 'a@b.c', plan: 'Premium' } }, 'u1'), 'identify · user u1 → 2 destinations'],
    ['group shows no groupId or traits', input('group', { groupId: 'acme', traits: { name: 'Acme' } }, 'u1'), 'group · user u1 → 2 destinations'],
    ['alias shows only the user', input('alias', { previousId: 'anon-1' }, 'u1'), 'alias · user u1 → 2 destinations'],
    ['delete notification', input('delete', {}, 'u9', 3), 'delete · user u9 → 3 destinations'],
    ['an anonymous message names no anonymousId', input('track', { event: 'Viewed', anonymousId: 'a-123' }, undefined), 'track · Viewed · anonymous → 2 destinations'],
    ['a page without a name', input('page', { properties: {} }, 'u1'), 'page · user u1 → 2 destinations'],
    ['a non-string event is left out', input('track', { event: { nested: true } }, 'u1'), 'track · user u1 → 2 destinations'],
    ['a long event name is cut to 60 characters', input('track', { event: 'x'.repeat(200) }, 'u1'), `track · ${'x'.repeat(59)}… · user u1 → 2 destinations`],
    ['line breaks become spaces (one line)', input('track', { event: 'Order\nCompleted\r\n' }, 'u\t1'), 'track · Order Completed · user u 1 → 2 destinations'],
    ['markdown links and html from a sender are escaped', input('track', { event: '[click](https://evil.example) <b>' }, 'u1'), 'track · \\[click\\](https://evil.example) \\<b\\> · user u1 → 2 destinations'],
    // Crypto-shredding: a sealed body's input names neither the event nor the user.
    [
      'a sealed body names neither event nor user',
      { type: 'track' as const, userId: undefined, destinationIds: ['dst_0'], message: undefined, sealedMessage: { sealed: 1 as const, subject: 'h1_x', iv: '', data: '' } },
      'track · sealed → 1 destination',
    ],
  ])('%s', (_name, given, expected) => {
    expect(deliverySummary(given)).toBe(expected);
  });

  it('details name the ids to search by, one per line', () => {
    expect(deliveryDetails({ sourceId: 'src_1', messageId: 'm-1', destinationIds: ['dst_a', 'dst_b'] })).toBe('source src_1\nmessage m-1\ndestinations dst_a, dst_b');
  });
});

describe('webhook URL label (what an attempt summary may show)', () => {
  it.each([
    ['https://hooks.example.com/switchyard', 'https://hooks.example.com/switchyard'],
    ['https://user:pass@hooks.example.com/in', 'https://hooks.example.com/in'],
    ['https://hooks.example.com/in?token=s3cret&x=1#frag', 'https://hooks.example.com/in'],
    ['http://127.0.0.1:9000/hook', 'http://127.0.0.1:9000/hook'],
    ['https://[::1]:8443/a/b', 'https://[::1]:8443/a/b'],
    ['https://discord.com/api/webhooks/123456789012345678/AbCdEf0123456789_ghIJkl-mnop', 'https://discord.com/api/webhooks/123456789012345678/…'],
    ['https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX', 'https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX'],
    ['https://hooks.slack.com/services/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', 'https://hooks.slack.com/services/T0A1B2C3D/B0A1B2C3D/…'],
    ['https://api.example.com/v1/order_completed_webhook', 'https://api.example.com/v1/order_completed_webhook'],
    ['not a url', '(invalid URL)'],
  ])('%s → %s', (url, expected) => {
    expect(webhookLabel(url)).toBe(expected);
  });
});

describe('attempt summary', () => {
  it.each([
    [0, 1, 'dst_1', 'https://hooks.example.com/in', 'POST webhook 0 https://hooks.example.com/in'],
    [2, 1, 'dst_1', 'https://b.example.com/x', 'POST webhook 2 https://b.example.com/x'],
    [1, 4, 'dst_1', 'https://b.example.com/x', 'POST webhook 1 https://b.example.com/x · round 4'],
    [0, 1, 'dst_1', undefined, 'POST webhook 0 of dst_1'],
    [0, 2, 'dst_1', undefined, 'POST webhook 0 of dst_1 · round 2'],
  ])('webhook %i, round %i of %s (%s)', (index, round, destinationId, label, expected) => {
    expect(attemptSummary(index, round, destinationId, label)).toBe(expected);
  });
});
