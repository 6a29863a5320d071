import { signingOverlapSweep } from '../../src/api/signing-overlaps';

/** The sweep's timing: when it asks the store to drop ended overlaps. */
describe("the API's sweep of ended signing-secret overlaps", () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => jest.useRealTimers());

  function store(nextEnds: (number | undefined | Error)[]) {
    const calls: number[] = [];
    return {
      calls,
      destinations: {
        async dropEndedSigningOverlaps(nowMs: number) {
          calls.push(nowMs);
          const next = nextEnds.shift();
          if (next instanceof Error) throw next;
          return { dropped: 0, nextEndMs: next };
        },
      },
    };
  }

  it('sweeps at start, then at the earliest end the store names, then at least every minute', async () => {
    const { calls, destinations } = store([1_005_000, undefined, undefined]);
    const sweep = signingOverlapSweep(destinations);
    sweep.start();
    await jest.advanceTimersByTimeAsync(0);
    expect(calls).toEqual([1_000_000]);
    await jest.advanceTimersByTimeAsync(5_000);
    expect(calls).toEqual([1_000_000, 1_005_000]);
    await jest.advanceTimersByTimeAsync(60_000);
    expect(calls).toEqual([1_000_000, 1_005_000, 1_065_000]);
    await sweep.stop();
  });

  it('sweeps when a rotation made here says its overlap ends, sooner than the next look', async () => {
    const { calls, destinations } = store([undefined, undefined]);
    const sweep = signingOverlapSweep(destinations);
    sweep.start();
    await jest.advanceTimersByTimeAsync(0);
    sweep.endsAt(1_003_000);
    sweep.endsAt(1_040_000); // later than what is armed: changes nothing
    await jest.advanceTimersByTimeAsync(3_000);
    expect(calls).toEqual([1_000_000, 1_003_000]);
    await sweep.stop();
  });

  it('a failed sweep is logged and tried again at the next look; nothing runs once stopped', async () => {
    const { calls, destinations } = store([new Error('store unavailable'), undefined]);
    const warnings: unknown[] = [];
    const sweep = signingOverlapSweep(destinations, { warn: (...args: unknown[]) => warnings.push(args), info: () => undefined } as never);
    sweep.start();
    await jest.advanceTimersByTimeAsync(0);
    expect(warnings).toEqual([[{ err: 'store unavailable' }, expect.stringContaining('tried again at the next look')]]);
    await jest.advanceTimersByTimeAsync(60_000);
    expect(calls).toHaveLength(2);
    await sweep.stop();
    sweep.endsAt(1_061_000);
    await jest.advanceTimersByTimeAsync(120_000);
    expect(calls).toHaveLength(2);
  });
});
