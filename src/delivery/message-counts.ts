import { STOP_REASONS, type StopReason } from './stop-reasons';
import { minuteOf } from './webhook-health';

/**
 * The overview's counts ("where every message went"): messages received per source and
 * minute, and messages a destination did not get per minute, by the reason that stopped them (the
 * decision's words) and, for filters, by filter. Pure: the API's recorder adds decisions up here
 * and the store adds every API process's counts into the same rows.
 */

/** Why a destination got no delivery for a message: the first rule that stopped it. */
export const FILTERED_REASONS = STOP_REASONS;
export type FilteredReason = StopReason;

/**
 * A message a destination got, changed by a transformation: counted in the same rows as the stops,
 * under this word (never a stop reason) and the transformation's id, so one flush writes both.
 */
export const CHANGED_REASON = 'changed';

export interface ReceivedCount {
  sourceId: string;
  minute: number;
  count: number;
}

export interface FilteredCount {
  destinationId: string;
  minute: number;
  reason: FilteredReason | typeof CHANGED_REASON;
  /** The filter that dropped or sampled the message out, the transformation that dropped or changed it; '' for the other reasons. */
  filterId: string;
  count: number;
}

export interface MessageCounts {
  received: ReceivedCount[];
  filtered: FilteredCount[];
}

const SEP = '\u0000';

/** Counts in memory until drained; keys are sorted on drain so concurrent upserts lock rows in one order. */
export class MessageCountAggregator {
  private readonly received = new Map<string, number>();
  private readonly filtered = new Map<string, number>();

  get size(): number {
    return this.received.size + this.filtered.size;
  }

  addReceived(sourceId: string, atMs: number, count = 1): void {
    const key = [sourceId, minuteOf(atMs)].join(SEP);
    this.received.set(key, (this.received.get(key) ?? 0) + count);
  }

  addFiltered(destinationId: string, atMs: number, reason: FilteredReason | typeof CHANGED_REASON, filterId = '', count = 1): void {
    const key = [destinationId, minuteOf(atMs), reason, filterId].join(SEP);
    this.filtered.set(key, (this.filtered.get(key) ?? 0) + count);
  }

  drain(): MessageCounts {
    const received = [...this.received].sort(([a], [b]) => (a < b ? -1 : 1)).map(([key, count]) => {
      const [sourceId, minute] = key.split(SEP);
      return { sourceId, minute: Number(minute), count };
    });
    const filtered = [...this.filtered].sort(([a], [b]) => (a < b ? -1 : 1)).map(([key, count]) => {
      const [destinationId, minute, reason, filterId] = key.split(SEP);
      return { destinationId, minute: Number(minute), reason: reason as FilteredReason, filterId, count };
    });
    this.received.clear();
    this.filtered.clear();
    return { received, filtered };
  }

  /** Puts counts back after a failed write, so the next flush carries them. */
  restore(counts: MessageCounts): void {
    for (const { sourceId, minute, count } of counts.received) this.addReceived(sourceId, minute * 60_000, count);
    for (const { destinationId, minute, reason, filterId, count } of counts.filtered) this.addFiltered(destinationId, minute * 60_000, reason, filterId, count);
  }
}

/** What the overview says a destination did not get, by reason, and per filter; and what transformations changed and dropped, per transformation. */
export interface FilteredSummary {
  filtered: Record<FilteredReason, number>;
  byFilter: Array<{ id: string; dropped: number }>;
  byTransformation: Array<{ id: string; changed: number; dropped: number }>;
}

/** Adds up a destination's stored filtered counts: each message is under the one reason that stopped it first. */
export function summarizeFiltered(rows: ReadonlyArray<Pick<FilteredCount, 'reason' | 'filterId' | 'count'>>): FilteredSummary {
  const filtered = Object.fromEntries(FILTERED_REASONS.map((reason) => [reason, 0])) as Record<FilteredReason, number>;
  const perFilter = new Map<string, number>();
  const perTransformation = new Map<string, { changed: number; dropped: number }>();
  const transformation = (id: string) => perTransformation.get(id) ?? perTransformation.set(id, { changed: 0, dropped: 0 }).get(id)!;
  for (const { reason, filterId, count } of rows) {
    if (reason === CHANGED_REASON) {
      transformation(filterId).changed += count;
      continue;
    }
    if (!(FILTERED_REASONS as readonly string[]).includes(reason)) continue;
    filtered[reason] += count;
    if (reason === 'transformation') transformation(filterId).dropped += count;
    else if (filterId !== '') perFilter.set(filterId, (perFilter.get(filterId) ?? 0) + count);
  }
  return {
    filtered,
    byFilter: [...perFilter].map(([id, dropped]) => ({ id, dropped })),
    byTransformation: [...perTransformation].map(([id, counts]) => ({ id, ...counts })),
  };
}
