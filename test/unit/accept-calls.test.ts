import { acceptCall } from '../../src/messages/accept-calls';
import { callProblem, MAX_CALL_BYTES } from '../../src/messages/call-rules';

describe('callProblem', () => {
  it.each([
    ['identify', { traits: {} }, 'userId: userId or anonymousId is required for identify calls'],
    ['identify', { userId: '' }, 'userId: userId or anonymousId is required for identify calls'],
    ['identify', { anonymousId: 'a' }, undefined],
    ['track', { userId: 'u' }, 'event: is required for track calls'],
    ['track', { anonymousId: 'a', event: 'E' }, undefined],
    ['page', { userId: 'u' }, undefined],
    ['screen', {}, 'userId: userId or anonymousId is required for screen calls'],
    ['group', { userId: 'u' }, 'groupId: is required for group calls'],
    ['group', { userId: 'u', groupId: 7 }, undefined],
    ['alias', { previousId: 'p' }, 'userId: is required for alias calls (the new identity)'],
    ['alias', { userId: 'u' }, 'previousId: is required for alias calls (the identity aliased from)'],
    ['alias', { userId: 'u', previousId: 'p' }, undefined],
    ['track', { userId: 'u', event: 'E', timestamp: '2026-01-01' }, 'timestamp: must be an ISO 8601 date-time with a time zone, e.g. 2026-01-31T12:00:00.000Z'],
  ] as const)('%s %j → %s', (type, raw, problem) => {
    expect(callProblem({ type, fields: raw as Record<string, unknown> })).toBe(problem);
  });

  it('prefixes the field with the message position inside a batch', () => {
    expect(callProblem({ type: 'track', fields: { userId: 'u' } }, 'batch[4].')).toBe('batch[4].event: is required for track calls');
  });

  it('rejects a message over 32 KB, naming its size', () => {
    const raw = { userId: 'u', event: 'E', properties: { blob: 'x'.repeat(MAX_CALL_BYTES) } };
    expect(callProblem({ type: 'track', fields: raw })).toMatch(/^message: is 32\d{3} bytes; a message may be at most 32768 bytes \(32 KB\)$/);
    expect(callProblem({ type: 'track', fields: { userId: 'u', event: 'E', properties: { blob: 'x'.repeat(32_000) } } })).toBeUndefined();
  });
});

describe('acceptCall', () => {
  it('fills messageId, stamps receivedAt, turns numeric ids into strings and defaults context', () => {
    const accepted = acceptCall({ type: 'group', fields: { userId: 42, groupId: 7 } }, Date.parse('2026-01-01T00:00:00Z'), undefined, () => 'generated');
    expect(accepted).toMatchObject({ type: 'group', messageId: 'generated', userId: '42', groupId: '7', receivedAt: '2026-01-01T00:00:00.000Z', timestamp: '2026-01-01T00:00:00.000Z', context: {} });
  });

  it('keeps the client messageId and uses the batch sentAt for skew correction', () => {
    const accepted = acceptCall({ type: 'identify', fields: { messageId: 'mine', userId: 'u', timestamp: '2026-01-01T00:00:00Z' } }, Date.parse('2026-01-01T05:00:10Z'), '2026-01-01T00:00:10Z', () => 'x');
    expect(accepted.messageId).toBe('mine');
    expect(accepted.timestamp).toBe('2026-01-01T05:00:00.000Z');
  });
});
