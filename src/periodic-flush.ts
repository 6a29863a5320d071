import { minuteOf } from './delivery/webhook-health';

/** Counts added up in memory that hand themselves over for a write and take back what a failed write left. */
export interface PendingCounts<Batch> {
  readonly size: number;
  drain(): Batch;
  restore(batch: Batch): void;
}

/** Old rows are deleted by at most one flush in this long (a range delete on an index). */
const PRUNE_EVERY_MS = 10 * 60_000;

/**
 * Writes counts kept in memory every `flushIntervalMs` (webhook health in the worker, the
 * overview's counts in the API), so the path that counts pays a map update, never a write. Every
 * PRUNE_EVERY_MS a write also deletes rows older than `retentionMinutes`. A crash loses at most one
 * interval's counts; a write that fails keeps them for the next one. One write at a time.
 */
export class PeriodicFlush<Batch> {
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();
  private lastPruneMs = 0;
  private readonly retentionMinutes: number;
  private readonly onFailure: (err: Error) => void;
  private readonly clock: () => number;

  constructor(
    private readonly counts: PendingCounts<Batch>,
    private readonly write: (batch: Batch, options: { deleteBeforeMinute?: number }) => Promise<void>,
    options: { flushIntervalMs: number; retentionMinutes: number; onFailure: (err: Error) => void; clock?: () => number },
  ) {
    this.retentionMinutes = options.retentionMinutes;
    this.onFailure = options.onFailure;
    this.clock = options.clock ?? Date.now;
    this.timer = setInterval(() => void this.flush(), options.flushIntervalMs);
    // Never what keeps a process alive; close() writes the last counts.
    this.timer.unref();
  }

  /** Writes what was counted since the last flush; one flush at a time. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.writeNow());
    return this.flushing;
  }

  private async writeNow(): Promise<void> {
    const now = this.clock();
    const prune = now - this.lastPruneMs >= PRUNE_EVERY_MS;
    if (this.counts.size === 0 && !prune) return;
    const batch = this.counts.drain();
    try {
      await this.write(batch, prune ? { deleteBeforeMinute: minuteOf(now) - this.retentionMinutes } : {});
      if (prune) this.lastPruneMs = now;
    } catch (err) {
      this.counts.restore(batch);
      this.onFailure(err as Error);
    }
  }

  /** Stops the timer and writes the last counts (shutdown, after the work that counts has finished). */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
