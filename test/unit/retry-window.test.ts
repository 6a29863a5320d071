import { attemptBudgetMs, BUSY_MAX_WAIT_MS, busyWait, EXECUTION_GRACE_MS, executionTimeoutMs } from '../../src/delivery/retry-window';

describe('executionTimeoutMs (the retry window as a hard deadline)', () => {
  it('is the window plus a short grace, and plus any start delay', () => {
    expect(executionTimeoutMs({ retryWindowMs: 4 * 3_600_000 })).toBe(4 * 3_600_000 + EXECUTION_GRACE_MS);
    expect(executionTimeoutMs({ retryWindowMs: 10_000 }, 6_000)).toBe(16_000 + EXECUTION_GRACE_MS);
  });
});

describe('attemptBudgetMs', () => {
  it.each([
    ['no window given (a workflow from before the rule)', 5_000, undefined, 1_000, 5_000],
    ['plenty of window left', 5_000, 100_000, 1_000, 5_000],
    ['less window left than the timeout', 5_000, 3_000, 1_000, 2_000],
    ['the window ends now', 5_000, 1_000, 1_000, 0],
    ['the window has ended', 5_000, 1_000, 9_000, -8_000],
  ])('%s', (_case, timeoutMs, notAfterMs, nowMs, expected) => {
    expect(attemptBudgetMs(timeoutMs, notAfterMs, nowMs)).toBe(expected);
  });
});

describe('busyWait (a busy webhook waits its turn)', () => {
  const policy = { maxBackoffMs: 600_000 };
  it.each([
    [1, 0, 125], [1, 0.999999, 250], [2, 0, 250], [3, 0.5, 750], [20, 0, BUSY_MAX_WAIT_MS / 2], [200, 0.999999, BUSY_MAX_WAIT_MS],
  ])('busy answer %i with random %f waits %i ms', (n, random, expected) => {
    expect(busyWait(n, policy, random)).toBe(expected);
  });

  it('never waits longer than the policy\'s max backoff', () => {
    expect(busyWait(30, { maxBackoffMs: 1_000 }, 0.999999)).toBe(1_000);
  });
});
