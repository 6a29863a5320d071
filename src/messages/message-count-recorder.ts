import type { Logger } from 'pino';
import { MessageCountAggregator, type FilteredReason } from '../delivery/message-counts';
import { DAY_MINUTES, minuteOf } from '../delivery/webhook-health';
import type { Metrics } from '../metrics';
import type { Store } from '../store/types';

/** Counts are kept a week: the overview reads the last day by default, and any window inside the week. */
export const MESSAGE_COUNT_RETENTION_MINUTES = 7 * DAY_MINUTES;
/** Old counts are deleted by at most one flush in this long. */
const PRUNE_EVERY_MS = 10 * 60_000;

/** What the message path hands over for the overview: what a source received, what a destination did not get and why. */
export interface DecisionRecorder {
  received(sourceId: string, atMs: number, count: number): void;
  filtered(destinationId: string, atMs: number, reason: FilteredReason, filterId?: string): void;
}

/**
 * The overview's counts for one API process (issue 30), as HealthRecorder does for webhook health:
 * added up in memory per minute and written every `flushIntervalMs` in one transaction that adds
 * to the stored rows, so the ingest path pays a map update, never a write. A crash loses at most
 * one interval's counts; a flush that fails keeps them for the next one. The metric counts at once.
 */
export class MessageCountRecorder implements DecisionRecorder {
  private readonly aggregator = new MessageCountAggregator();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();
  private lastPruneMs = 0;

  constructor(
    private readonly store: Pick<Store, 'messageCounts'>,
    flushIntervalMs: number,
    private readonly metrics?: Pick<Metrics, 'messagesFiltered'>,
    private readonly logger?: Pick<Logger, 'warn'>,
    private readonly clock: () => number = Date.now,
  ) {
    this.timer = setInterval(() => void this.flush(), flushIntervalMs);
    this.timer.unref();
  }

  received(sourceId: string, atMs: number, count: number): void {
    this.aggregator.addReceived(sourceId, atMs, count);
  }

  filtered(destinationId: string, atMs: number, reason: FilteredReason, filterId = ''): void {
    this.aggregator.addFiltered(destinationId, atMs, reason, filterId);
    this.metrics?.messagesFiltered.inc({ destination: destinationId, reason });
  }

  /** Writes what was counted since the last flush; one flush at a time. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.write());
    return this.flushing;
  }

  private async write(): Promise<void> {
    const now = this.clock();
    const prune = now - this.lastPruneMs >= PRUNE_EVERY_MS;
    if (this.aggregator.size === 0 && !prune) return;
    const counts = this.aggregator.drain();
    try {
      await this.store.messageCounts.add(counts, prune ? { deleteBeforeMinute: minuteOf(now) - MESSAGE_COUNT_RETENTION_MINUTES } : {});
      if (prune) this.lastPruneMs = now;
    } catch (err) {
      this.aggregator.restore(counts);
      this.logger?.warn({ err: (err as Error).message }, 'overview counts flush failed; kept for the next one');
    }
  }

  /** Stops the timer and writes the last counts (API shutdown, after its requests have finished). */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
