import { backoffDelay, classifyAttempt, parseRetryAfter, retryDelay, RETRY_AFTER_CAP_MS, type AttemptResult } from '../../../src/client/retry';

const response = (status: number): AttemptResult => ({ kind: 'response', status, body: '' });

describe('classifyAttempt', () => {
  it.each([200, 201, 204])('%i is delivered', (status) => expect(classifyAttempt(response(status))).toBe('delivered'));
  it.each([408, 429, 500, 502, 503, 504, 599])('%i is retried: it can succeed later', (status) => expect(classifyAttempt(response(status))).toBe('retry'));
  it.each([301, 400, 401, 403, 404, 413, 422])('%i fails at once: retrying would get the same answer', (status) => expect(classifyAttempt(response(status))).toBe('fail'));

  it('retries network errors and timeouts', () => {
    expect(classifyAttempt({ kind: 'network_error', error: new Error('ECONNREFUSED'), timedOut: false })).toBe('retry');
    expect(classifyAttempt({ kind: 'network_error', error: new Error('no answer'), timedOut: true })).toBe('retry');
  });

  it('does not retry an attempt that close() abandoned', () => {
    expect(classifyAttempt({ kind: 'aborted' })).toBe('fail');
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-03-01T10:00:00.000Z');
  it.each([
    ['1', 1000],
    [' 120 ', 120_000],
    ['0', 0],
    ['Sun, 01 Mar 2026 10:00:30 GMT', 30_000],
    ['Sun, 01 Mar 2026 09:00:00 GMT', 0],
  ])('reads %p as %i ms', (header, ms) => expect(parseRetryAfter(header, now)).toBe(ms));

  it.each([undefined, '', '-5', '1.5', 'soon', '2026-03-01'])('ignores %p', (header) => expect(parseRetryAfter(header, now)).toBeUndefined());
});

describe('backoffDelay', () => {
  const backoff = { initial: 100, max: 1000 };
  it.each([
    [1, 0, 50],
    [1, 0.999, 100],
    [2, 0, 100],
    [3, 0.5, 300],
    [4, 0, 400],
    [5, 0, 500],
    [5, 0.999, 1000],
    [30, 0.5, 750],
  ])('retry %i with random %p waits %i ms', (retry, random, ms) => expect(backoffDelay(retry, backoff, random)).toBe(ms));

  it('never exceeds the cap and never drops below half of it', () => {
    for (let retry = 1; retry < 64; retry++) {
      for (const random of [0, 0.25, 0.5, 0.75, 0.9999]) {
        const delay = backoffDelay(retry, backoff, random);
        expect(delay).toBeLessThanOrEqual(backoff.max);
        expect(delay).toBeGreaterThanOrEqual(Math.min(backoff.max, 100 * 2 ** (retry - 1)) / 2);
      }
    }
  });
});

describe('retryDelay', () => {
  const backoff = { initial: 10, max: 100 };
  it('waits at least what Retry-After asks', () => expect(retryDelay(1, backoff, 2000, 0)).toBe(2000));
  it('keeps its own backoff when Retry-After asks for less', () => expect(retryDelay(4, backoff, 0, 0)).toBe(40));
  it('uses the backoff when there is no Retry-After', () => expect(retryDelay(2, backoff, undefined, 0)).toBe(10));
  it('caps an absurd Retry-After', () => expect(retryDelay(1, backoff, 86_400_000, 0)).toBe(RETRY_AFTER_CAP_MS));
});
