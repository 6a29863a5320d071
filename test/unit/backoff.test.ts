import { canRetryAt, nextBackoff } from '../../src/delivery/backoff';

const policy = { initialBackoffMs: 1_000, maxBackoffMs: 60_000 };

describe('nextBackoff', () => {
  it.each([
    [1, 0, 500], [1, 0.999999, 1_000], [2, 0, 1_000], [3, 0, 2_000], [4, 0.5, 6_000],
  ])('round %i with random %f waits %i ms', (round, random, expected) => {
    expect(nextBackoff(round, policy, random)).toBe(expected);
  });

  it('doubles each round until the cap, never below half the capped value', () => {
    for (let round = 1; round < 40; round++) {
      const low = nextBackoff(round, policy, 0);
      const high = nextBackoff(round, policy, 0.999999);
      const base = Math.min(60_000, 1_000 * 2 ** (round - 1));
      expect(low).toBe(base / 2);
      expect(high).toBeLessThanOrEqual(base);
      expect(high).toBeGreaterThan(low - 1);
    }
  });

  it('waits at least the Retry-After, even past the cap', () => {
    expect(nextBackoff(1, policy, 0, 5_000)).toBe(5_000);
    expect(nextBackoff(10, policy, 0.9, 120_000)).toBe(120_000);
    expect(nextBackoff(3, policy, 0, 10)).toBe(2_000);
  });
});

describe('canRetryAt (hard deadline from the first attempt)', () => {
  it.each([
    [0, 100, 1_000, true],
    [0, 999, 1_000, true],
    [0, 1_000, 1_000, false],
    [900, 200, 1_000, false],
  ])('now %i + wait %i against deadline %i → %s', (now, delay, deadline, allowed) => {
    expect(canRetryAt(now, delay, deadline)).toBe(allowed);
  });
});
