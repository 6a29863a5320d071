import { acceptCall, acceptCalls } from '../../src/messages/accept-calls';
import { callProblem, MAX_CALL_BYTES } from '../../src/messages/call-rules';
import { outgoing } from '../../src/messages/plan-deliveries';
import { profileUpdates } from '../../src/personas/profile-updates';

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
    expect(callProblem({ type, fields: raw })).toBe(problem);
  });

  describe('Segment Consent Preference Updated needs the preferences it announces (as Segment)', () => {
    const PREFERENCE_EVENT = 'Segment Consent Preference Updated';
    const REFUSED = 'context.consent.categoryPreferences: is required for a track named "Segment Consent Preference Updated" and must be an object of category → true/false';
    it.each<[string, Record<string, unknown>, string | undefined]>([
      ['with preferences', { context: { consent: { categoryPreferences: { analytics: true, advertising: false } } } }, undefined],
      ['with every category refused ({})', { context: { consent: { categoryPreferences: {} } } }, undefined],
      ['without context', {}, REFUSED],
      ['without consent', { context: { ip: '203.0.113.9' } }, REFUSED],
      ['consent without categoryPreferences', { context: { consent: {} } }, REFUSED],
      ['categoryPreferences null', { context: { consent: { categoryPreferences: null } } }, REFUSED],
      ['categoryPreferences a list', { context: { consent: { categoryPreferences: ['analytics'] } } }, REFUSED],
      ['categoryPreferences a string', { context: { consent: { categoryPreferences: 'analytics' } } }, REFUSED],
    ])('%s', (_, fields, problem) => {
      expect(callProblem({ type: 'track', fields: { userId: 'u', event: PREFERENCE_EVENT, ...fields } })).toBe(problem);
    });

    it('applies to that track only: other events, and other calls carrying the name, need no preferences', () => {
      expect(callProblem({ type: 'track', fields: { userId: 'u', event: 'Order Completed' } })).toBeUndefined();
      expect(callProblem({ type: 'page', fields: { userId: 'u', name: PREFERENCE_EVENT } })).toBeUndefined();
      expect(callProblem({ type: 'track', fields: { userId: 'u', event: PREFERENCE_EVENT } }, 'batch[2].')).toBe(`batch[2].${REFUSED}`);
    });
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

describe('context.ip', () => {
  const receivedAtMs = Date.parse('2026-01-01T00:00:00Z');
  it.each([
    ['fills it from the request when the call has none', { userId: 'u', event: 'E' }, '203.0.113.7', { ip: '203.0.113.7' }],
    ['keeps the rest of the context', { userId: 'u', event: 'E', context: { page: { path: '/' } } }, '203.0.113.7', { page: { path: '/' }, ip: '203.0.113.7' }],
    ['keeps an ip the call gives', { userId: 'u', event: 'E', context: { ip: '198.51.100.1' } }, '203.0.113.7', { ip: '198.51.100.1' }],
    ['fills a null or empty ip', { userId: 'u', event: 'E', context: { ip: null } }, '203.0.113.7', { ip: '203.0.113.7' }],
    ['leaves the context alone when the request has no address', { userId: 'u', event: 'E' }, undefined, {}],
  ])('%s', (_rule, fields, ip, context) => {
    const acceptance = acceptCalls([{ type: 'track', fields }], { receivedAtMs, ip });
    expect(acceptance).toEqual({ accepted: [expect.objectContaining({ message: expect.objectContaining({ context }) })] });
  });

  it('fills every call of a batch', () => {
    const acceptance = acceptCalls([{ type: 'track', fields: { userId: 'u', event: 'E' } }, { type: 'identify', fields: { userId: 'u' } }], { receivedAtMs, ip: '203.0.113.7', inBatch: true });
    expect('accepted' in acceptance && acceptance.accepted.map((a) => a.message.context.ip)).toEqual(['203.0.113.7', '203.0.113.7']);
  });
});

describe('acceptCalls: one message per call, the same for profiles and delivery', () => {
  const receivedAtMs = Date.parse('2026-01-01T00:00:10Z');
  const track = { type: 'track' as const, fields: { userId: 'u', event: 'E', timestamp: '2026-01-01T00:00:00Z' } };

  it('rejects the whole request at the first broken rule, naming the call inside a batch', () => {
    expect(acceptCalls([track, { type: 'group', fields: { userId: 'u' } }], { receivedAtMs, inBatch: true })).toEqual({ problem: 'batch[1].groupId: is required for group calls' });
  });

  // A date that is no date is the sender's mistake (400), never a RangeError (500).
  it.each([
    ['the batch sentAt', [track], 'yesterday', 'sentAt'],
    ['the batch sentAt, empty', [track], '', 'sentAt'],
    ['a call sentAt', [track, track, { ...track, fields: { ...track.fields, sentAt: 'yesterday' } }], undefined, 'batch[2].sentAt'],
    ['a call timestamp', [track, track, { ...track, fields: { ...track.fields, timestamp: '2026-13-01T00:00:00Z' } }], undefined, 'batch[2].timestamp'],
    ['a call originalTimestamp', [track, track, { ...track, fields: { userId: 'u', event: 'E', originalTimestamp: 'now' } }], undefined, 'batch[2].originalTimestamp'],
  ])('rejects %s when it is no ISO 8601 date-time, naming the field', (_case, calls, batchSentAt, field) => {
    expect(acceptCalls(calls, { receivedAtMs, batchSentAt, inBatch: true })).toEqual({ problem: `${field}: must be an ISO 8601 date-time with a time zone, e.g. 2026-01-31T12:00:00.000Z` });
  });

  it('gives a call without messageId a UUID from its content and place: a re-sent request maps to the same ids, two equal calls of one batch to two', () => {
    const first = acceptCalls([track, track], { receivedAtMs, inBatch: true });
    const again = acceptCalls([track, track], { receivedAtMs: receivedAtMs + 5_000, inBatch: true });
    if (!('accepted' in first) || !('accepted' in again)) throw new Error('expected acceptance');
    const ids = first.accepted.map((a) => a.message.messageId);
    expect(ids[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(ids[0]).not.toBe(ids[1]);
    expect(again.accepted.map((a) => a.message.messageId)).toEqual(ids);
  });

  const idsOf = (acceptance: ReturnType<typeof acceptCalls>) => {
    if (!('accepted' in acceptance)) throw new Error(`expected acceptance, got ${acceptance.problem}`);
    return acceptance.accepted.map((a) => a.message.messageId);
  };

  // Segment's libraries re-stamp sentAt on every attempt, so the derived id comes from the
  // client's own timestamp, never from sentAt or the timestamp corrected with it.
  it.each([
    ['timestamp, re-sent with a new call sentAt', { userId: 'u', event: 'E', timestamp: '2026-01-01T00:00:00Z', sentAt: '2026-01-01T00:00:01Z' }, { sentAt: '2026-01-01T00:00:31Z' }, undefined, undefined],
    ['timestamp, re-sent with a new batch sentAt', { userId: 'u', event: 'E', timestamp: '2026-01-01T00:00:00Z' }, {}, '2026-01-01T00:00:01Z', '2026-01-01T00:00:31Z'],
    ['originalTimestamp, re-sent with a new batch sentAt', { userId: 'u', event: 'E', originalTimestamp: '2026-01-01T00:00:00.000+01:00' }, {}, '2026-01-01T00:00:01Z', '2026-01-01T00:00:31Z'],
    ['timestamp, first sent without sentAt, then with one', { userId: 'u', event: 'E', timestamp: '2026-01-01T00:00:00Z' }, { sentAt: '2026-01-01T00:00:31Z' }, undefined, undefined],
  ])('derives the same messageId for a call with its own %s', (_case, fields, retryFields, firstBatchSentAt, retryBatchSentAt) => {
    const first = acceptCalls([{ type: 'track', fields }], { receivedAtMs, batchSentAt: firstBatchSentAt, inBatch: true });
    // Re-stamped 30 s later, arriving 30.25 s later: the network took longer this time.
    const retry = acceptCalls([{ type: 'track', fields: { ...fields, ...retryFields } }], { receivedAtMs: receivedAtMs + 30_250, batchSentAt: retryBatchSentAt, inBatch: true });
    expect(idsOf(retry)).toEqual(idsOf(first));
  });

  it('keeps the messageIds it derived before for calls sent without sentAt (same namespace, same content)', () => {
    expect(idsOf(acceptCalls([{ type: 'track', fields: { userId: 'u', event: 'E', timestamp: '2026-01-01T00:00:00Z' } }], { receivedAtMs }))).toEqual(['d3b87537-b106-520a-8efb-6a7d8fa1de8e']);
    const batch = [
      { type: 'track' as const, fields: { userId: 'u', event: 'E' } },
      { type: 'identify' as const, fields: { userId: 'u', traits: { plan: 'pro' }, originalTimestamp: '2026-01-01T00:00:00.000+01:00' } },
    ];
    expect(idsOf(acceptCalls(batch, { receivedAtMs, inBatch: true }))).toEqual(['7e47383d-5cc7-5302-8ea5-68b264921cf4', 'f3044bb4-bc9c-577f-99b6-1b66649f517a']);
  });

  it.each([
    ['a call without timestamp, re-sent later (it has no stable identity)', { userId: 'u', event: 'E' }, { userId: 'u', event: 'E' }],
    ['calls with different timestamps', { userId: 'u', event: 'E', timestamp: '2026-01-01T00:00:00Z' }, { userId: 'u', event: 'E', timestamp: '2026-01-01T00:00:00.001Z' }],
    ['calls with different content', { userId: 'u', event: 'E', timestamp: '2026-01-01T00:00:00Z' }, { userId: 'u', event: 'F', timestamp: '2026-01-01T00:00:00Z' }],
  ])('derives different messageIds for %s', (_case, fields, otherFields) => {
    const first = acceptCalls([{ type: 'track', fields }], { receivedAtMs, batchSentAt: '2026-01-01T00:00:01Z' });
    const other = acceptCalls([{ type: 'track', fields: otherFields }], { receivedAtMs: receivedAtMs + 30_000, batchSentAt: '2026-01-01T00:00:31Z' });
    expect(idsOf(other)).not.toEqual(idsOf(first));
  });

  it('uses the one messageId for the profile row and the delivery body', () => {
    const acceptance = acceptCalls([track], { receivedAtMs });
    if (!('accepted' in acceptance)) throw new Error('expected acceptance');
    const [{ message }] = acceptance.accepted;
    expect(profileUpdates([message])[0]).toMatchObject({ messageId: message.messageId });
    expect(outgoing(message)).toMatchObject({ messageId: message.messageId, body: { messageId: message.messageId } });
  });

  it.each([undefined, { Webhooks: false }, { All: false, Webhooks: true }])('keeps the call\'s integrations %j for the per-destination decision', (integrations) => {
    const acceptance = acceptCalls([{ type: 'track', fields: { ...track.fields, integrations } }], { receivedAtMs });
    expect(acceptance).toMatchObject({ accepted: [{ integrations }] });
  });
});
