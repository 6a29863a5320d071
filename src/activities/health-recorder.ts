import type { Logger } from 'pino';
import { DAY_MINUTES, HealthAggregator, minuteOf } from '../delivery/webhook-health';
import type { AttemptOutcome, HoldReason } from '../delivery/types';
import type { Store } from '../store/types';

/** Buckets are kept two days: the health route reads one. */
const RETENTION_MINUTES = 2 * DAY_MINUTES;
/** Old buckets are deleted by at most one flush in this long (a range delete on an index). */
const PRUNE_EVERY_MS = 10 * 60_000;

/** What an attempt hands over for webhook health: where it went, when it ended, how, how long. */
export interface AttemptRecorder {
  record(destinationId: string, url: string, endedAtMs: number, outcome: AttemptOutcome, durationMs: number): void;
  /** A wait a message sat out without sending (issue 20): paused, throttled or backpressured. */
  recordHold(destinationId: string, url: string, endedAtMs: number, reason: HoldReason, ms: number): void;
}

/**
 * Webhook health for one worker process (issue 14): attempts are added up in memory per
 * destination, URL and minute (HealthAggregator), and every `flushIntervalMs` the buckets are
 * added to the store's rows in one transaction, so any number of workers sum up in the same rows.
 * The attempt's path pays a map lookup, never a write. A crash loses at most one interval's counts;
 * a flush that fails keeps its buckets for the next one.
 */
export class HealthRecorder implements AttemptRecorder {
  private readonly aggregator = new HealthAggregator();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();
  private lastPruneMs = 0;

  constructor(
    private readonly store: Pick<Store, 'webhookHealth'>,
    flushIntervalMs: number,
    private readonly logger?: Pick<Logger, 'warn'>,
    private readonly clock: () => number = Date.now,
  ) {
    this.timer = setInterval(() => void this.flush(), flushIntervalMs);
    // Never what keeps a process alive; close() flushes the last counts.
    this.timer.unref();
  }

  record(destinationId: string, url: string, endedAtMs: number, outcome: AttemptOutcome, durationMs: number): void {
    this.aggregator.record(destinationId, url, endedAtMs, outcome, durationMs);
  }

  recordHold(destinationId: string, url: string, endedAtMs: number, reason: HoldReason, ms: number): void {
    this.aggregator.recordHold(destinationId, url, endedAtMs, reason, ms);
  }

  /** Writes what was recorded since the last flush; one flush at a time. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.write());
    return this.flushing;
  }

  private async write(): Promise<void> {
    const now = this.clock();
    const prune = now - this.lastPruneMs >= PRUNE_EVERY_MS;
    if (this.aggregator.size === 0 && !prune) return;
    const buckets = this.aggregator.drain();
    try {
      await this.store.webhookHealth.add(buckets, prune ? { deleteBeforeMinute: minuteOf(now) - RETENTION_MINUTES } : {});
      if (prune) this.lastPruneMs = now;
    } catch (err) {
      this.aggregator.restore(buckets);
      this.logger?.warn({ err: (err as Error).message, buckets: buckets.length }, 'webhook health flush failed; kept for the next one');
    }
  }

  /** Stops the timer and writes the last counts (worker shutdown, after its attempts have finished). */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
