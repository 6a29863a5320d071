import { messageBody } from '../../src/delivery/payload';
import { personasMessageId, uuidV5 } from '../../src/personas/message-ids';
import { toPersonasIdentify } from '../../src/personas/messages';

describe('deterministic message ids', () => {
  it('are RFC 4122 version 5 UUIDs (the published example: www.example.com in the DNS namespace)', () => {
    expect(uuidV5('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8')).toBe('2ed6657d-e927-568b-95e1-2665a8aea6a2');
  });

  it('are the same for the same (computation, version, profile) and differ when any part differs', () => {
    const id = personasMessageId('aud_1', 3, 'user-1');
    expect(personasMessageId('aud_1', 3, 'user-1')).toBe(id);
    expect(new Set([id, personasMessageId('aud_2', 3, 'user-1'), personasMessageId('aud_1', 4, 'user-1'), personasMessageId('aud_1', 3, 'user-2')]).size).toBe(4);
  });

  it('cannot be made to collide by ids that contain the separator', () => {
    expect(personasMessageId('aud_1', 1, 'a:b')).not.toBe(personasMessageId('aud_1:a', 1, 'b'));
    expect(personasMessageId('aud_1', 12, '3')).not.toBe(personasMessageId('aud_1', 1, '23'));
  });
});

describe('the identify call a sync sends (seed, Personas rules 1-2)', () => {
  const computation = { kind: 'audience' as const, id: 'aud_1', key: 'first_time_shopper', version: 2, computedAt: '2026-03-01T10:00:00.000Z' };

  it('carries the snake_case key with true or false, context.personas, and the version\'s timestamp', () => {
    const message = messageBody(toPersonasIdentify(computation, { profileId: 'ada', userId: 'ada', value: 'true' }));
    expect(message).toEqual({
      version: 1,
      type: 'identify',
      messageId: personasMessageId('aud_1', 2, 'ada'),
      userId: 'ada',
      timestamp: '2026-03-01T10:00:00.000Z',
      receivedAt: '2026-03-01T10:00:00.000Z',
      context: { personas: { computation_class: 'audience', computation_id: 'aud_1', computation_key: 'first_time_shopper' } },
      traits: { first_time_shopper: true },
    });
    expect(toPersonasIdentify(computation, { profileId: 'bob', userId: 'bob', value: 'false' }).traits).toEqual({ first_time_shopper: false });
  });

  it('addresses a profile known only by its anonymous id by that id', () => {
    const message = toPersonasIdentify({ ...computation, kind: 'computed_trait', key: 'orders' }, { profileId: 'anon-9', userId: null, value: '3' });
    expect(message).toMatchObject({ anonymousId: 'anon-9', traits: { orders: 3 }, context: { personas: { computation_class: 'computed_trait' } } });
    expect(message.userId).toBeUndefined();
  });

  it('builds the same bytes when a rerun builds it again', () => {
    const change = { profileId: 'ada', userId: 'ada', value: '{"a":[1,2]}' };
    expect(JSON.stringify(messageBody(toPersonasIdentify(computation, change)))).toBe(JSON.stringify(messageBody(toPersonasIdentify(computation, change))));
  });
});
