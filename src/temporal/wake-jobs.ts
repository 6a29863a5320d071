import { setMaxListeners } from 'node:events';

/**
 * Waking a destination's held deliveries (a resume, a new rate limit, a cleared
 * backpressure) is one job per destination. A new change supersedes the job under way: that one
 * stops before its next signal (its holds are woken by the new job's signals, which every hold
 * treats alike). Three rate changes during an incident are then one walk of the backlog, not three
 * at once. Pure bookkeeping: the caller's job does the I/O and honours the abort signal.
 */
export class WakeJobs {
  private readonly running = new Map<string, { abort: AbortController; done: Promise<unknown> }>();

  /** Destinations with a job under way. */
  get size(): number {
    return this.running.size;
  }

  /** Starts `job` for the destination, aborting the one under way for it. */
  run<T>(destinationId: string, job: (signal: AbortSignal) => Promise<T>): Promise<T> {
    this.running.get(destinationId)?.abort.abort();
    const abort = new AbortController();
    // Every signal and page read of the job listens on it (the SDK's), a few at a time but many in all.
    setMaxListeners(0, abort.signal);
    const done = job(abort.signal).finally(() => {
      if (this.running.get(destinationId)?.abort === abort) this.running.delete(destinationId);
    });
    this.running.set(destinationId, { abort, done });
    return done;
  }

  /**
   * Aborts every job and waits for them to stop (shutdown). Not part of the API's drain of calls
   * it owes an answer: a wake is an optimisation, since every hold asks again at the end of its wait.
   */
  async stopAll(): Promise<void> {
    const jobs = [...this.running.values()];
    for (const job of jobs) job.abort.abort();
    await Promise.allSettled(jobs.map((job) => job.done));
  }
}

/**
 * The listing in pages of `size`, each sorted oldest first, read one page ahead of none: a backlog
 * of any length costs a page of memory. Visibility lists newest first and SQL visibility has no
 * ORDER BY, so a backlog longer than a page is woken oldest first within each page.
 */
export async function* oldestFirstPages<T extends { startTime: Date }>(listing: AsyncIterable<T>, size: number): AsyncGenerator<T[]> {
  let page: T[] = [];
  for await (const item of listing) {
    page.push(item);
    if (page.length >= size) {
      yield page.sort(byStart);
      page = [];
    }
  }
  if (page.length > 0) yield page.sort(byStart);
}

const byStart = (a: { startTime: Date }, b: { startTime: Date }) => a.startTime.getTime() - b.startTime.getTime();
