import { encodeMessage, prepareMessage, type Stamp } from '../../../src/client/validate';
import { MAX_MESSAGE_BYTES } from '../../../src/client/limits';
import type { Message, MessageType } from '../../../src/client/types';

const stamp: Stamp = {
  now: () => new Date('2026-03-01T10:00:00.000Z'),
  newMessageId: () => 'generated-id',
  library: { name: 'switchyard-client', version: '9.9.9' },
};

function prepared(type: MessageType, input: unknown): Message {
  const result = prepareMessage(type, input, stamp);
  if (!result.ok) throw new Error(`expected a valid message, got ${result.error.message}`);
  return result.value;
}

function problem(type: MessageType, input: unknown) {
  const result = prepareMessage(type, input, stamp);
  if (result.ok) throw new Error('expected a validation error');
  return result.error;
}

describe('prepareMessage: required fields (seed, Go client library messages)', () => {
  it.each([
    ['identify', { traits: { plan: 'pro' } }],
    ['track', { event: 'Signed Up' }],
    ['page', { name: 'Home' }],
    ['screen', { name: 'Home' }],
    ['group', { groupId: 'g1' }],
  ] as const)('%s needs a userId or an anonymousId', (type, input) => {
    const error = problem(type, input);
    expect(error.code).toBe('invalid_message');
    expect(error.field).toBe('userId');
    expect(error.message).toBe(`userId: userId or anonymousId is required for ${type} calls`);
  });

  it.each([
    ['userId', { userId: 'u1' }],
    ['anonymousId', { anonymousId: 'a1' }],
  ])('accepts %s alone as the identity', (_, identity) => {
    expect(prepared('identify', identity)).toMatchObject(identity);
  });

  it('treats empty strings and null ids as absent', () => {
    expect(problem('identify', { userId: '', anonymousId: null }).field).toBe('userId');
  });

  it('track needs an event name', () => {
    expect(problem('track', { userId: 'u1' })).toMatchObject({ code: 'invalid_message', field: 'event', message: 'event: is required for track calls (the event name)' });
  });

  it('group needs a groupId', () => {
    expect(problem('group', { userId: 'u1' })).toMatchObject({ field: 'groupId', message: 'groupId: is required for group calls' });
  });

  it('alias needs userId and previousId, and an anonymousId does not stand in for userId', () => {
    expect(problem('alias', { previousId: 'anon-1', anonymousId: 'anon-1' }).field).toBe('userId');
    expect(problem('alias', { userId: 'u1' })).toMatchObject({ field: 'previousId', message: 'previousId: is required for alias calls (the identity aliased from)' });
    expect(prepared('alias', { userId: 'u1', previousId: 'anon-1' })).toMatchObject({ type: 'alias', userId: 'u1', previousId: 'anon-1' });
  });
});

describe('prepareMessage: field types', () => {
  it.each([
    ['userId', { userId: 42 }, 'userId: must be a string, got number 42'],
    ['event', { userId: 'u1', event: ['x'] }, 'event: must be a string, got an array'],
    ['traits', { userId: 'u1', event: 'e', traits: 'vip' }, 'traits: must be an object, got string "vip"'],
    ['properties', { userId: 'u1', event: 'e', properties: [1] }, 'properties: must be an object, got an array'],
    ['context', { userId: 'u1', event: 'e', context: 7 }, 'context: must be an object, got number 7'],
    ['integrations.Webhooks', { userId: 'u1', event: 'e', integrations: { Webhooks: 'false' } }, 'integrations.Webhooks: must be true, false or an options object'],
    ['integrations.All', { userId: 'u1', event: 'e', integrations: { All: { x: 1 } } }, 'integrations.All: must be true or false'],
    ['timestamp', { userId: 'u1', event: 'e', timestamp: 'March 7 2024' }, 'timestamp: must be a valid Date or an ISO 8601 date-time with a time zone, e.g. 2026-01-31T12:00:00.000Z'],
    ['timestamp', { userId: 'u1', event: 'e', timestamp: '2024-03-07T10:00:00' }, expect.stringContaining('with a time zone')],
    ['timestamp', { userId: 'u1', event: 'e', timestamp: new Date('nonsense') }, expect.stringContaining('valid Date')],
    ['messageId', { userId: 'u1', event: 'e', messageId: 'x'.repeat(201) }, 'messageId: must be at most 200 characters, got 201'],
    ['event', { userId: 'u1', event: 'e'.repeat(1025) }, 'event: must be at most 1024 characters, got 1025'],
  ])('names %s when it is wrong', (field, input, message) => {
    expect(problem('track', input)).toMatchObject({ code: 'invalid_message', field, message });
  });

  it('refuses a call that is not an object', () => {
    expect(problem('track', 'Signed Up')).toMatchObject({ field: 'message', message: 'message: track expects an object' });
    expect(problem('identify', undefined).field).toBe('message');
  });
});

describe('prepareMessage: what is sent', () => {
  it('fills messageId, timestamp and context.library, and keeps only Tracking API fields', () => {
    const message = prepared('track', { userId: 'u1', event: 'Signed Up', properties: { plan: 'pro' }, unknownField: 1 });
    expect(message).toEqual({
      type: 'track',
      messageId: 'generated-id',
      timestamp: '2026-03-01T10:00:00.000Z',
      userId: 'u1',
      event: 'Signed Up',
      properties: { plan: 'pro' },
      context: { library: { name: 'switchyard-client', version: '9.9.9' } },
    });
  });

  it('keeps an explicit timestamp (historical import), normalised to UTC with milliseconds', () => {
    expect(prepared('page', { userId: 'u1', timestamp: '2019-05-01T12:30:00+02:00' }).timestamp).toBe('2019-05-01T10:30:00.000Z');
    expect(prepared('page', { userId: 'u1', timestamp: new Date(Date.UTC(2019, 4, 1)) }).timestamp).toBe('2019-05-01T00:00:00.000Z');
  });

  it("keeps the caller's messageId and context, adding the library only when absent", () => {
    const message = prepared('screen', { anonymousId: 'a1', name: 'Home', messageId: 'm-1', context: { app: { name: 'Shop' }, library: { name: 'custom', version: '1' } } });
    expect(message.messageId).toBe('m-1');
    expect(message.context).toEqual({ app: { name: 'Shop' }, library: { name: 'custom', version: '1' } });
  });

  it('carries page properties, name and category, group traits and integrations', () => {
    expect(prepared('page', { userId: 'u1', name: 'Pricing', category: 'Docs', properties: { url: 'https://x.test/p', path: '/p' } })).toMatchObject({
      name: 'Pricing',
      category: 'Docs',
      properties: { url: 'https://x.test/p', path: '/p' },
    });
    expect(prepared('group', { userId: 'u1', groupId: 'g1', traits: { seats: 5 }, integrations: { All: false, Webhooks: true } })).toMatchObject({
      groupId: 'g1',
      traits: { seats: 5 },
      integrations: { All: false, Webhooks: true },
    });
  });
});

describe('encodeMessage', () => {
  const base = prepared('track', { userId: 'u1', event: 'Big' });

  it('accepts a message of exactly 32 KB and refuses one byte more, reporting the size', () => {
    const overhead = Buffer.byteLength(JSON.stringify({ ...base, properties: { blob: '' } }));
    const atLimit = { ...base, properties: { blob: 'x'.repeat(MAX_MESSAGE_BYTES - overhead) } };
    const encoded = encodeMessage(atLimit);
    expect(encoded).toMatchObject({ ok: true, value: { bytes: MAX_MESSAGE_BYTES } });

    const over = encodeMessage({ ...base, properties: { blob: 'x'.repeat(MAX_MESSAGE_BYTES - overhead + 1) } });
    if (over.ok) throw new Error('expected the 32 KB limit to apply');
    expect(over.error.code).toBe('message_too_large');
    expect(over.error.size).toBe(MAX_MESSAGE_BYTES + 1);
    expect(over.error.message).toContain(`is ${MAX_MESSAGE_BYTES + 1} bytes encoded; a message may be at most 32768 bytes (32 KB)`);
  });

  it('counts bytes, not characters', () => {
    const encoded = encodeMessage({ ...base, properties: { word: 'héllo ✓' } });
    if (!encoded.ok) throw encoded.error;
    expect(encoded.value.bytes).toBe(Buffer.byteLength(encoded.value.json, 'utf8'));
    expect(encoded.value.bytes).toBeGreaterThan(encoded.value.json.length);
  });

  it('refuses what JSON cannot encode instead of failing later in the background', () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const result = encodeMessage({ ...base, properties: circular });
    expect(result).toMatchObject({ ok: false, error: { code: 'invalid_message', field: 'message' } });
    expect(encodeMessage({ ...base, properties: { n: BigInt(1) } })).toMatchObject({ ok: false, error: { code: 'invalid_message' } });
  });
});
