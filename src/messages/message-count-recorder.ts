import type { Logger } from 'pino';
import { CHANGED_REASON, MessageCountAggregator, type FilteredReason, type MessageCounts } from '../delivery/message-counts';
import { DAY_MINUTES } from '../delivery/webhook-health';
import { PeriodicFlush } from '../periodic-flush';
import type { Metrics } from '../metrics';
import type { Store } from '../store/types';

/** Counts are kept a week: the overview reads the last day by default, and any window inside the week. */
export const MESSAGE_COUNT_RETENTION_MINUTES = 7 * DAY_MINUTES;

/** What the message path hands over for the overview: what a source received, what a destination did not get and why. */
export interface DecisionRecorder {
  received(sourceId: string, atMs: number, count: number): void;
  filtered(destinationId: string, atMs: number, reason: FilteredReason, filterId?: string): void;
  /** A message this destination gets, changed by this transformation (absent: not counted). */
  transformed?(destinationId: string, atMs: number, transformationId: string): void;
}

/**
 * The overview's counts for one API process, as HealthRecorder does for webhook health:
 * added up in memory per minute and written by PeriodicFlush in one transaction that adds to the
 * stored rows, so the ingest path pays a map update, never a write. The metric counts at once.
 */
export class MessageCountRecorder implements DecisionRecorder {
  private readonly aggregator = new MessageCountAggregator();
  private readonly writer: PeriodicFlush<MessageCounts>;

  constructor(
    store: Pick<Store, 'messageCounts'>,
    flushIntervalMs: number,
    private readonly metrics?: Pick<Metrics, 'messagesFiltered'>,
    logger?: Pick<Logger, 'warn'>,
    clock: () => number = Date.now,
  ) {
    this.writer = new PeriodicFlush(this.aggregator, (counts, options) => store.messageCounts.add(counts, options), {
      flushIntervalMs,
      retentionMinutes: MESSAGE_COUNT_RETENTION_MINUTES,
      onFailure: (err) => logger?.warn({ err: err.message }, 'overview counts flush failed; kept for the next one'),
      clock,
    });
  }

  received(sourceId: string, atMs: number, count: number): void {
    this.aggregator.addReceived(sourceId, atMs, count);
  }

  filtered(destinationId: string, atMs: number, reason: FilteredReason, filterId = ''): void {
    this.aggregator.addFiltered(destinationId, atMs, reason, filterId);
    this.metrics?.messagesFiltered.inc({ destination: destinationId, reason });
  }

  transformed(destinationId: string, atMs: number, transformationId: string): void {
    this.aggregator.addFiltered(destinationId, atMs, CHANGED_REASON, transformationId);
  }

  /** Writes what was counted since the last flush; one flush at a time. */
  flush(): Promise<void> {
    return this.writer.flush();
  }

  /** Stops the timer and writes the last counts (API shutdown, after its requests have finished). */
  close(): Promise<void> {
    return this.writer.close();
  }
}
