import { toDeleteMessage, messageBody, type Message } from '../../src/delivery/payload';

const base: Message = {
  type: 'track',
  messageId: 'm1',
  userId: 'u1',
  timestamp: '2026-01-01T00:00:00.000Z',
  receivedAt: '2026-01-01T00:00:01.000Z',
  context: { ip: '203.0.113.1' },
};

describe('messageBody (seed: Message bodies sent to a webhook URL)', () => {
  it.each([
    ['page', { name: 'Home', properties: { path: '/' } }, { name: 'Home', properties: { path: '/' } }],
    ['screen', { name: 'Cart' }, { name: 'Cart', properties: {} }],
    ['identify', { traits: { plan: 'pro' } }, { traits: { plan: 'pro' } }],
    ['track', { event: 'Bought', properties: { total: 1 } }, { event: 'Bought', properties: { total: 1 } }],
    ['group', { groupId: 'g', traits: { size: 3 } }, { groupId: 'g', traits: { size: 3 } }],
  ] as const)('%s carries version 1, the common fields and its own', (type, fields, expected) => {
    const body = messageBody({ ...base, type, ...fields });
    expect(body).toEqual({ version: 1, type, messageId: 'm1', userId: 'u1', timestamp: base.timestamp, receivedAt: base.receivedAt, context: base.context, ...expected });
  });

  it('alias carries `Previous ID` and `User ID` (and previousId/userId for Segment-built receivers)', () => {
    const body = messageBody({ ...base, type: 'alias', userId: 'new', previousId: 'old' });
    expect(body).toMatchObject({ version: 1, type: 'alias', 'Previous ID': 'old', 'User ID': 'new', previousId: 'old', userId: 'new' });
  });

  it('leaves out fields the call did not carry', () => {
    const body = messageBody({ ...base, type: 'identify', userId: undefined, anonymousId: 'anon' });
    expect(body).not.toHaveProperty('userId');
    expect(body.anonymousId).toBe('anon');
    expect(Object.values(body)).not.toContain(undefined);
  });

  it('serializes to the same bytes after a parse round trip (what a receiver verifies)', () => {
    const body = messageBody({ ...base, properties: { a: 1.5, b: 'é', c: [1, { d: null }] } });
    const wire = JSON.stringify(body);
    expect(JSON.stringify(JSON.parse(wire))).toBe(wire);
  });
});

describe('toDeleteMessage', () => {
  it('carries only type, userId and timestamp — no version (seed)', () => {
    expect(toDeleteMessage('u9', '2026-01-01T00:00:00.000Z')).toEqual({ type: 'delete', userId: 'u9', timestamp: '2026-01-01T00:00:00.000Z' });
  });
});
