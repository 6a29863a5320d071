import { messageBody } from '../../src/delivery/payload';
import { personasMessageId, uuidV5 } from '../../src/personas/message-ids';
import { toPersonasIdentify } from '../../src/personas/messages';
import { parseKeyring } from '../../src/privacy/keyring';

const keyring = parseKeyring(`k1=${Buffer.alloc(32, 1).toString('base64')}`);
const otherKeyring = parseKeyring(`k1=${Buffer.alloc(32, 2).toString('base64')}`);

describe('deterministic message ids', () => {
  it('are RFC 4122 version 5 UUIDs (the published example: www.example.com in the DNS namespace)', () => {
    expect(uuidV5('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8')).toBe('2ed6657d-e927-568b-95e1-2665a8aea6a2');
  });

  it('are the same for the same (computation, version, profile) and differ when any part differs', () => {
    const id = personasMessageId(undefined, 'aud_1', 3, 'user-1');
    expect(personasMessageId(undefined, 'aud_1', 3, 'user-1')).toBe(id);
    expect(new Set([id, personasMessageId(undefined, 'aud_2', 3, 'user-1'), personasMessageId(undefined, 'aud_1', 4, 'user-1'), personasMessageId(undefined, 'aud_1', 3, 'user-2')]).size).toBe(4);
  });

  it('with keys, derive from the keyed hash of the profile id: stable under the key, unconfirmable without it', () => {
    const id = personasMessageId(keyring, 'aud_1', 3, 'ada@example.com');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(personasMessageId(keyring, 'aud_1', 3, 'ada@example.com')).toBe(id);
    // A guess hashed without the key (the unkeyed UUIDv5 of before) or under another key does not match.
    expect(personasMessageId(undefined, 'aud_1', 3, 'ada@example.com')).not.toBe(id);
    expect(personasMessageId(otherKeyring, 'aud_1', 3, 'ada@example.com')).not.toBe(id);
    expect(personasMessageId(keyring, 'aud_1', 3, 'bob@example.com')).not.toBe(id);
  });

  it('cannot be made to collide by ids that contain the separator', () => {
    expect(personasMessageId(undefined, 'aud_1', 1, 'a:b')).not.toBe(personasMessageId(undefined, 'aud_1:a', 1, 'b'));
    expect(personasMessageId(undefined, 'aud_1', 12, '3')).not.toBe(personasMessageId(undefined, 'aud_1', 1, '23'));
  });
});

describe('the identify call a sync sends (seed, Personas rules 1-2)', () => {
  const computation = { kind: 'audience' as const, id: 'aud_1', key: 'first_time_shopper', version: 2, computedAt: '2026-03-01T10:00:00.000Z' };

  it('carries the snake_case key with true or false, context.personas, and the version\'s timestamp', () => {
    const message = messageBody(toPersonasIdentify(undefined, computation, { profileId: 'ada', userId: 'ada', value: 'true' }));
    expect(message).toEqual({
      version: 1,
      type: 'identify',
      messageId: personasMessageId(undefined, 'aud_1', 2, 'ada'),
      userId: 'ada',
      timestamp: '2026-03-01T10:00:00.000Z',
      receivedAt: '2026-03-01T10:00:00.000Z',
      context: { personas: { computation_class: 'audience', computation_id: 'aud_1', computation_key: 'first_time_shopper' } },
      traits: { first_time_shopper: true },
    });
    expect(toPersonasIdentify(undefined, computation, { profileId: 'bob', userId: 'bob', value: 'false' }).traits).toEqual({ first_time_shopper: false });
  });

  it('addresses a profile known only by its anonymous id by that id', () => {
    const message = toPersonasIdentify(undefined, { ...computation, kind: 'computed_trait', key: 'orders' }, { profileId: 'anon-9', userId: null, value: '3' });
    expect(message).toMatchObject({ anonymousId: 'anon-9', traits: { orders: 3 }, context: { personas: { computation_class: 'computed_trait' } } });
    expect(message.userId).toBeUndefined();
  });

  it("carries the profile's latest consent preferences as context.consent, and none when none are known", () => {
    const known = toPersonasIdentify(undefined, computation, { profileId: 'ada', userId: 'ada', value: 'true', consent: '{"advertising":false,"analytics":true}' });
    expect(known.context).toEqual({
      personas: { computation_class: 'audience', computation_id: 'aud_1', computation_key: 'first_time_shopper' },
      consent: { categoryPreferences: { advertising: false, analytics: true } },
    });
    expect(toPersonasIdentify(undefined, computation, { profileId: 'ada', userId: 'ada', value: 'true', consent: null }).context).not.toHaveProperty('consent');
  });

  it('builds the same bytes when a rerun builds it again', () => {
    const change = { profileId: 'ada', userId: 'ada', value: '{"a":[1,2]}' };
    expect(JSON.stringify(messageBody(toPersonasIdentify(undefined, computation, change)))).toBe(JSON.stringify(messageBody(toPersonasIdentify(undefined, computation, change))));
  });
});
