import { classifyError, classifyResponse } from '../../src/delivery/outcome';

describe('classifyResponse', () => {
  it.each([
    [200, 'success'], [201, 'success'], [204, 'success'], [299, 'success'],
    [500, 'retry'], [502, 'retry'], [503, 'retry'], [504, 'retry'], [599, 'retry'], [408, 'retry'], [429, 'retry'],
    [301, 'permanent'], [302, 'permanent'], [307, 'permanent'], [308, 'permanent'],
    [400, 'permanent'], [401, 'permanent'], [403, 'permanent'], [404, 'permanent'], [410, 'permanent'], [422, 'permanent'],
  ])('HTTP %i is %s', (status, kind) => {
    expect(classifyResponse(status).kind).toBe(kind);
  });

  it('keeps a Retry-After only on retryable answers', () => {
    expect(classifyResponse(429, 2_000)).toEqual({ kind: 'retry', status: 429, reason: 'HTTP 429', retryAfterMs: 2_000 });
    expect(classifyResponse(503, 1_000)).toMatchObject({ retryAfterMs: 1_000 });
    expect(classifyResponse(400, 1_000)).not.toHaveProperty('retryAfterMs');
  });

  it('says why a redirect is not followed', () => {
    expect(classifyResponse(302)).toMatchObject({ reason: expect.stringMatching(/redirects are not followed/) });
  });
});

describe('classifyError', () => {
  it.each(['DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'CERT_HAS_EXPIRED', 'ERR_TLS_CERT_ALTNAME_INVALID'])('%s is permanent (no request was sent)', (code) => {
    expect(classifyError(code, 'x', 5_000)).toMatchObject({ kind: 'permanent', reason: expect.stringMatching(/TLS certificate rejected/) });
  });

  it.each(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'TimeoutError'])('%s is a retryable timeout', (code) => {
    expect(classifyError(code, 'x', 5_000)).toEqual({ kind: 'retry', reason: 'timeout: no response within 5000ms' });
  });

  it.each([
    ['UND_ERR_INVALID_ARG', 'invalid x-token header'],
    ['ERR_INVALID_URL', 'Invalid URL'],
  ])('%s (Switchyard cannot build the request) is permanent, never retried', (code, message) => {
    expect(classifyError(code, message, 5_000)).toEqual({ kind: 'permanent', reason: `request could not be built (${code}: ${message}); no request was sent` });
  });

  it.each(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_SOCKET', undefined])('%s is retryable', (code) => {
    expect(classifyError(code, 'boom', 5_000).kind).toBe('retry');
  });
});
