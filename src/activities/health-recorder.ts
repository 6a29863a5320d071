import type { Logger } from 'pino';
import { DAY_MINUTES, HealthAggregator, type HealthBucket } from '../delivery/webhook-health';
import { PeriodicFlush } from '../periodic-flush';
import type { AttemptOutcome, HoldReason } from '../delivery/types';
import type { Store } from '../store/types';

/** Buckets are kept two days: the health route reads one. */
const RETENTION_MINUTES = 2 * DAY_MINUTES;

/** What an attempt hands over for webhook health: where it went, when it ended, how, how long. */
export interface AttemptRecorder {
  record(destinationId: string, url: string, endedAtMs: number, outcome: AttemptOutcome, durationMs: number): void;
  /** A wait a message sat out without sending: paused, throttled or backpressured. */
  recordHold(destinationId: string, url: string, endedAtMs: number, reason: HoldReason, ms: number): void;
}

/**
 * Webhook health for one worker process: attempts are added up in memory per
 * destination, URL and minute (HealthAggregator), and every `flushIntervalMs` the buckets are
 * added to the store's rows in one transaction, so any number of workers sum up in the same rows.
 * The attempt's path pays a map lookup, never a write. A crash loses at most one interval's counts;
 * a flush that fails keeps its buckets for the next one.
 */
export class HealthRecorder implements AttemptRecorder {
  private readonly aggregator = new HealthAggregator();
  private readonly writer: PeriodicFlush<HealthBucket[]>;

  constructor(store: Pick<Store, 'webhookHealth'>, flushIntervalMs: number, logger?: Pick<Logger, 'warn'>, clock: () => number = Date.now) {
    this.writer = new PeriodicFlush(this.aggregator, (buckets, options) => store.webhookHealth.add(buckets, options), {
      flushIntervalMs,
      retentionMinutes: RETENTION_MINUTES,
      onFailure: (err) => logger?.warn({ err: err.message }, 'webhook health flush failed; kept for the next one'),
      clock,
    });
  }

  record(destinationId: string, url: string, endedAtMs: number, outcome: AttemptOutcome, durationMs: number): void {
    this.aggregator.record(destinationId, url, endedAtMs, outcome, durationMs);
  }

  recordHold(destinationId: string, url: string, endedAtMs: number, reason: HoldReason, ms: number): void {
    this.aggregator.recordHold(destinationId, url, endedAtMs, reason, ms);
  }

  /** Writes what was recorded since the last flush; one flush at a time. */
  flush(): Promise<void> {
    return this.writer.flush();
  }

  /** Stops the timer and writes the last counts (worker shutdown, after its attempts have finished). */
  close(): Promise<void> {
    return this.writer.close();
  }
}
