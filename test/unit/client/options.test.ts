import { DEFAULTS, resolveOptions } from '../../../src/client/options';

const required = { writeKey: 'wk', endpoint: 'http://localhost:8080' };

describe('resolveOptions', () => {
  it("applies the seed's defaults: flushAt 20, flushAfter 5 s", () => {
    expect(resolveOptions(required)).toEqual({
      writeKey: 'wk',
      batchUrl: 'http://localhost:8080/v1/batch',
      flushAt: 20,
      flushAfter: 5000,
      timeout: DEFAULTS.timeout,
      maxRetries: DEFAULTS.maxRetries,
      backoff: DEFAULTS.backoff,
      maxQueueSize: DEFAULTS.maxQueueSize,
    });
  });

  it.each([
    ['http://h:1', 'http://h:1/v1/batch'],
    ['http://h:1/', 'http://h:1/v1/batch'],
    ['https://h/analytics/', 'https://h/analytics/v1/batch'],
  ])('posts %s batches to %s', (endpoint, url) => expect(resolveOptions({ ...required, endpoint }).batchUrl).toBe(url));

  it.each([
    [{ writeKey: '' }, 'Analytics option writeKey: must be a non-empty string, got ""'],
    [{ endpoint: 'localhost:8080' }, /Analytics option endpoint: must be an http or https URL/],
    [{ endpoint: 'ftp://h' }, /endpoint/],
    [{ endpoint: 'http://h/?x=1' }, /endpoint/],
    [{ flushAt: 0 }, 'Analytics option flushAt: must be an integer of at least 1, got 0'],
    [{ flushAt: 2.5 }, /flushAt/],
    [{ flushAfter: -1 }, /flushAfter: must be a positive number of milliseconds/],
    [{ timeout: Number.NaN }, /timeout/],
    [{ maxRetries: -1 }, /maxRetries/],
    [{ backoff: { initial: 100, max: 50 } }, /backoff.max: must be a number of milliseconds no smaller than backoff.initial/],
    [{ maxQueueSize: 0 }, /maxQueueSize/],
    [{ flushAt: 50, maxQueueSize: 49 }, 'Analytics option maxQueueSize: must be an integer of at least flushAt (50), or no batch would ever fill, got 49'],
  ])('refuses %p naming the option', (override, message) => {
    expect(() => resolveOptions({ ...required, ...override })).toThrow(message);
  });
});
