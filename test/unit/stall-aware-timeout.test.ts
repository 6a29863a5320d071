import { onTimerFired, READ_AFTER_STALL_MS, STALL_TOLERANCE_MS, stallAwareTimeout } from '../../src/activities/stall-aware-timeout';

describe('onTimerFired', () => {
  it.each([
    [0, false, 'time-out'],
    [STALL_TOLERANCE_MS, false, 'time-out'],
    [STALL_TOLERANCE_MS + 1, false, 'read-first'],
    [12_000, false, 'read-first'],
    [12_000, true, 'time-out'],
    [0, true, 'time-out'],
  ] as const)('fired %i ms late, read already %s: %s', (lateMs, readAlready, expected) => {
    expect(onTimerFired(lateMs, readAlready)).toBe(expected);
  });
});

describe('stallAwareTimeout', () => {
  it('times out on time when the process ran', async () => {
    const { signal } = stallAwareTimeout(20);
    await new Promise((resolve) => signal.addEventListener('abort', resolve));
    expect(signal.reason).toMatchObject({ name: 'TimeoutError' });
  });

  it('gives an answer waiting after a stall one short read before timing out', async () => {
    let clock = 0;
    const { signal } = stallAwareTimeout(10, () => clock);
    // The process "stalls": the clock jumps 5 s past the deadline before the timer runs.
    clock = 5_010;
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(signal.aborted).toBe(false);
    clock += READ_AFTER_STALL_MS;
    await new Promise((resolve) => signal.addEventListener('abort', resolve));
    expect(signal.reason).toMatchObject({ name: 'TimeoutError' });
  });

  it('never fires once cleared', async () => {
    const { signal, clear } = stallAwareTimeout(10);
    clear();
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(signal.aborted).toBe(false);
  });
});
