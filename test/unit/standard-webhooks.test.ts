import { Webhook } from 'standardwebhooks';
import { webhookRequestHeaders } from '../../src/delivery/request';
import { activeSigningSecrets, signingSecretRule, standardWebhookHeaders, standardWebhookId } from '../../src/delivery/standard-webhooks';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const OTHER = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

describe('standardWebhookHeaders', () => {
  it('matches the reference implementation for one secret', () => {
    const body = '{"type":"track","event":"A"}';
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = standardWebhookHeaders([SECRET], 'msg_1', timestamp, body);
    expect(headers['webhook-signature']).toBe(new Webhook(SECRET).sign('msg_1', new Date(timestamp * 1000), body));
    expect(new Webhook(SECRET).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it('carries one space-separated signature per secret, each verifiable on its own', () => {
    const body = '{"a":1}';
    const headers = standardWebhookHeaders([SECRET, OTHER], 'id', Math.floor(Date.now() / 1000), body);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(() => new Webhook(SECRET).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(OTHER).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(SECRET).verify('{"a":2}', headers)).toThrow();
  });
});

describe('activeSigningSecrets', () => {
  const now = Date.parse('2026-01-01T12:00:00.000Z');
  it.each([
    ['no signing', null, []],
    ['current only', { current: 'a' }, ['a']],
    ['previous within its overlap', { current: 'a', previous: { secret: 'b', until: '2026-01-01T12:00:01.000Z' } }, ['a', 'b']],
    ['previous at the end of its overlap', { current: 'a', previous: { secret: 'b', until: '2026-01-01T12:00:00.000Z' } }, ['a']],
    ['previous past its overlap', { current: 'a', previous: { secret: 'b', until: '2026-01-01T11:00:00.000Z' } }, ['a']],
  ])('%s', (_name, signing, expected) => {
    expect(activeSigningSecrets(signing, now)).toEqual(expected);
  });
});

describe('standardWebhookId', () => {
  it.each(['abc', 'msg_2x', '0f8fad5b-d9cb-469f-a165-70867728950e', 'a:b.c/d'])('keeps the header-safe messageId %s', (id) => {
    expect(standardWebhookId(id)).toBe(id);
  });
  it.each(['with space', 'tab\there', 'line\nbreak', 'ünï', '', 'x'.repeat(201)])('replaces %j with a stable digest', (id) => {
    expect(standardWebhookId(id)).toMatch(/^msg_[A-Za-z0-9_-]{32}$/);
    expect(standardWebhookId(id)).toBe(standardWebhookId(id));
  });
});

describe('signingSecretRule', () => {
  it.each([
    [SECRET, undefined],
    [OTHER, undefined],
    ['MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'must start with whsec_ (Standard Webhooks secret format)'],
    ['whsec_not base64!', 'must be whsec_ followed by base64'],
    ['whsec_abc', 'must be whsec_ followed by base64'],
    ['whsec_AAAA', 'must carry 24 to 64 bytes of key (base64), not 3'],
    [`whsec_${Buffer.alloc(65).toString('base64')}`, 'must carry 24 to 64 bytes of key (base64), not 65'],
  ])('%s → %s', (secret, rule) => {
    expect(signingSecretRule(secret)).toBe(rule);
  });
});

describe('webhookRequestHeaders with Standard Webhooks', () => {
  it('cannot be overridden by static headers of the same names', () => {
    const headers = webhookRequestHeaders({ 'Webhook-Id': 'forged', 'webhook-signature': 'v1,forged' }, null, '{}', { secrets: [SECRET], id: 'real', timestampSeconds: 1 });
    expect(headers['webhook-id']).toBe('real');
    expect(headers['webhook-signature']).not.toContain('forged');
    expect(Object.keys(headers).filter((h) => h.toLowerCase() === 'webhook-id')).toEqual(['webhook-id']);
  });

  it('adds nothing without a secret, and drops forged webhook-* static headers', () => {
    const headers = webhookRequestHeaders({ 'webhook-id': 'forged' }, null, '{}', { secrets: [], id: 'x', timestampSeconds: 1 });
    expect(Object.keys(headers).filter((h) => h.startsWith('webhook-'))).toEqual([]);
  });
});
