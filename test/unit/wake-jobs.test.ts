import { oldestFirstPages, WakeJobs } from '../../src/temporal/wake-jobs';

/** A job that runs until told to finish, recording whether it was aborted. */
function controllable() {
  let finish: (value: string) => void = () => undefined;
  const seen: { signal?: AbortSignal } = {};
  const job = (signal: AbortSignal) => {
    seen.signal = signal;
    return new Promise<string>((resolve) => {
      finish = resolve;
      signal.addEventListener('abort', () => resolve('aborted'));
    });
  };
  return { job, seen, finish: (value: string) => finish(value) };
}

describe('one wake job per destination', () => {
  it('supersedes the job under way for the same destination: a new change aborts the old walk', async () => {
    const jobs = new WakeJobs();
    const first = controllable();
    const second = controllable();
    const firstDone = jobs.run('dst_a', first.job);
    const secondDone = jobs.run('dst_a', second.job);
    expect(first.seen.signal?.aborted).toBe(true);
    expect(second.seen.signal?.aborted).toBe(false);
    expect(jobs.size).toBe(1);
    await expect(firstDone).resolves.toBe('aborted');
    second.finish('woken');
    await expect(secondDone).resolves.toBe('woken');
    expect(jobs.size).toBe(0);
  });

  it("leaves another destination's job running", async () => {
    const jobs = new WakeJobs();
    const a = controllable();
    const b = controllable();
    void jobs.run('dst_a', a.job);
    const bDone = jobs.run('dst_b', b.job);
    expect(a.seen.signal?.aborted).toBe(false);
    expect(jobs.size).toBe(2);
    b.finish('woken');
    await expect(bDone).resolves.toBe('woken');
    expect(jobs.size).toBe(1);
  });

  it('stops every job at shutdown instead of waiting the walk out', async () => {
    const jobs = new WakeJobs();
    const a = controllable();
    const done = jobs.run('dst_a', a.job);
    await jobs.stopAll();
    await expect(done).resolves.toBe('aborted');
    expect(jobs.size).toBe(0);
  });
});

describe('the held deliveries a page at a time, each page oldest first', () => {
  async function* listing(starts: number[], read: number[]) {
    for (const ms of starts) {
      read.push(ms);
      yield { id: ms, startTime: new Date(ms) };
    }
  }

  it.each<[string, number[], number, number[][]]>([
    ['none', [], 3, []],
    ['less than a page: one page, oldest first (as visibility gives newest first)', [5, 4, 3], 10, [[3, 4, 5]]],
    ['a backlog longer than a page: pages of the size, each oldest first', [9, 8, 7, 6, 5, 4, 3], 3, [[7, 8, 9], [4, 5, 6], [3]]],
  ])('%s', async (_, starts, size, pages) => {
    const got: number[][] = [];
    for await (const page of oldestFirstPages(listing(starts, []), size)) got.push(page.map((item) => item.id));
    expect(got).toEqual(pages);
  });

  it('reads no further than the page it hands over: memory is a page, not the backlog', async () => {
    const read: number[] = [];
    const pages = oldestFirstPages(listing([6, 5, 4, 3, 2, 1], read), 2);
    await pages.next();
    expect(read).toEqual([6, 5]);
    await pages.return(undefined);
  });
});
