import { createHmac } from 'node:crypto';
import { signBody, verifySignature } from '../../src/delivery/signature';
import { webhookRequestHeaders } from '../../src/delivery/request';

describe('signBody (seed: SHA1 HMAC, lowercase hex, over the UTF-8 JSON body)', () => {
  it('matches a known vector', () => {
    // echo -n '{"type":"track"}' | openssl dgst -sha1 -hmac secret
    expect(signBody('secret', '{"type":"track"}')).toBe(createHmac('sha1', 'secret').update('{"type":"track"}').digest('hex'));
    expect(signBody('key', 'The quick brown fox jumps over the lazy dog')).toBe('de7c9b85b8b78aa6bc8a7a36f70a90701c9db4d9');
  });

  it('is lowercase hex and covers non-ASCII text as UTF-8', () => {
    const signature = signBody('s', '{"name":"Zoë ✓"}');
    expect(signature).toMatch(/^[0-9a-f]{40}$/);
    expect(signature).toBe(createHmac('sha1', 's').update(Buffer.from('{"name":"Zoë ✓"}', 'utf8')).digest('hex'));
  });

  it('verifies with the same secret only', () => {
    const body = JSON.stringify({ type: 'identify', userId: 'u' });
    expect(verifySignature('a', body, signBody('a', body))).toBe(true);
    expect(verifySignature('b', body, signBody('a', body))).toBe(false);
    expect(verifySignature('a', `${body} `, signBody('a', body))).toBe(false);
    expect(verifySignature('a', body, 'short')).toBe(false);
  });
});

describe('webhookRequestHeaders', () => {
  it('adds the static headers, then the headers Switchyard owns', () => {
    expect(webhookRequestHeaders({ 'X-Team': 'a' }, null, '{}')).toEqual({ 'x-team': 'a', 'content-type': 'application/json', 'user-agent': 'Switchyard/1.0' });
  });

  it('signs only when a secret is set, and a static header cannot forge or override ours', () => {
    const forged = { 'Content-Type': 'text/plain', 'User-Agent': 'evil', 'X-Signature': 'forged' };
    expect(webhookRequestHeaders(forged, null, '{}')).not.toHaveProperty('x-signature');
    expect(webhookRequestHeaders(forged, 'k', '{}')).toMatchObject({ 'content-type': 'application/json', 'user-agent': 'Switchyard/1.0', 'x-signature': signBody('k', '{}') });
    expect(webhookRequestHeaders({}, '', '{}')).not.toHaveProperty('x-signature');
  });
});
