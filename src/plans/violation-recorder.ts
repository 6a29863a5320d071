import type { Logger } from 'pino';
import { DAY_MINUTES } from '../delivery/webhook-health';
import type { Metrics } from '../metrics';
import { PeriodicFlush } from '../periodic-flush';
import type { Store } from '../store/types';
import { ViolationAggregator, type ViolatingMessage } from './violation-counts';
import type { Violation } from './violations';

/** Violations are kept a week, as the overview's counts. */
export const VIOLATION_RETENTION_MINUTES = 7 * DAY_MINUTES;

/** What the message path hands over of a plan's violations. */
export interface ViolationRecorder {
  record(sourceId: string, message: ViolatingMessage, violations: readonly Violation[], atMs: number): void;
}

/**
 * Violations counted in memory per minute and written by PeriodicFlush, as the
 * overview's counts are (message-count-recorder.ts); the metric counts at once.
 */
export class StoredViolationRecorder implements ViolationRecorder {
  private readonly aggregator = new ViolationAggregator();
  private readonly writer: PeriodicFlush<ReturnType<ViolationAggregator['drain']>>;

  constructor(
    store: Pick<Store, 'violations'>,
    flushIntervalMs: number,
    private readonly metrics?: Pick<Metrics, 'trackingPlanViolations'>,
    logger?: Pick<Logger, 'warn'>,
  ) {
    this.writer = new PeriodicFlush(this.aggregator, ({ counts, users }, options) => store.violations.add(counts, { ...options, users }), {
      flushIntervalMs,
      retentionMinutes: VIOLATION_RETENTION_MINUTES,
      onFailure: (err) => logger?.warn({ err: err.message }, 'violation counts flush failed; kept for the next one'),
    });
  }

  record(sourceId: string, message: ViolatingMessage, violations: readonly Violation[], atMs: number): void {
    if (violations.length === 0) return;
    this.aggregator.add(sourceId, message, violations, atMs);
    for (const { violationType } of violations) this.metrics?.trackingPlanViolations.inc({ source: sourceId, event_type: message.type, violation_type: violationType });
  }

  flush(): Promise<void> {
    return this.writer.flush();
  }

  close(): Promise<void> {
    return this.writer.close();
  }
}
