import { BoundedMap } from '../bounded-map';
import { minuteOf } from '../delivery/webhook-health';
import type { ViolationCount } from '../store/types';
import type { Violation } from './violations';

const SEP = '\u0000';

/** Distinct violation rows an API process adds up between two flushes; past it, new fields are counted under OVERFLOW_FIELD. */
const MAX_AGGREGATED = 10_000;
/** Room kept beyond MAX_AGGREGATED for the overflow rows themselves (one per source, minute, event and type), so folding never evicts a count. */
const OVERFLOW_ROOM = 1_000;
/** Where the rows past MAX_AGGREGATED are counted, so no count is lost while memory stays bounded. */
export const OVERFLOW_FIELD = '(other fields)';
/** (source, event, field) keys the forwarding cap tracks in a minute; past it, the least recently used starts over. */
const MAX_CAPPED = 10_000;

/** Where a violation was seen: the message's call type, its event (track) or page/screen name, its id. */
export interface ViolatingMessage {
  type: string;
  eventName: string;
  messageId: string;
}

/**
 * Violations added up in memory per (source, minute, event type, event name, field, violation
 * type) until a flush writes them (violation-recorder.ts): the ingest path pays a map update, never
 * a write. Pure: no clock, no I/O.
 */
export class ViolationAggregator {
  private readonly counts = new BoundedMap<string, ViolationCount>(MAX_AGGREGATED + OVERFLOW_ROOM);

  get size(): number {
    return this.counts.size;
  }

  add(sourceId: string, message: ViolatingMessage, violations: readonly Violation[], atMs: number): void {
    const minute = minuteOf(atMs);
    const at = new Date(atMs).toISOString();
    for (const { field, violationType, description } of violations) {
      this.addCount({ sourceId, minute, eventType: message.type, eventName: message.eventName, field, violationType, description, count: 1, firstSeenAt: at, lastSeenAt: at, lastMessageId: message.messageId });
    }
  }

  private addCount(given: ViolationCount): void {
    let key = [given.sourceId, given.minute, given.eventType, given.eventName, given.field, given.violationType].join(SEP);
    let row = given;
    if (!this.counts.has(key) && this.counts.size >= MAX_AGGREGATED) {
      row = { ...given, field: OVERFLOW_FIELD, description: `${OVERFLOW_FIELD}: more distinct violations than one flush keeps` };
      key = [row.sourceId, row.minute, row.eventType, row.eventName, row.field, row.violationType].join(SEP);
    }
    const seen = this.counts.get(key);
    if (!seen) {
      this.counts.set(key, { ...row });
      return;
    }
    seen.count += row.count;
    if (row.firstSeenAt < seen.firstSeenAt) seen.firstSeenAt = row.firstSeenAt;
    if (row.lastSeenAt >= seen.lastSeenAt) Object.assign(seen, { lastSeenAt: row.lastSeenAt, lastMessageId: row.lastMessageId, description: row.description });
  }

  drain(): ViolationCount[] {
    const rows = [...this.counts].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, row]) => row);
    this.counts.clear();
    return rows;
  }

  restore(rows: ViolationCount[]): void {
    for (const row of rows) this.addCount(row);
  }
}

/**
 * At most `perMinute` Violation Generated events per (source, event, field) a
 * minute; the rest are suppressed and counted. One bad release must not multiply traffic.
 */
export class ViolationCap {
  private minute = -1;
  private readonly sent = new BoundedMap<string, number>(MAX_CAPPED);

  constructor(private readonly perMinute: number) {}

  /** Whether one more may go for this key in the minute of `atMs`. */
  allow(sourceId: string, eventName: string, field: string, atMs: number): boolean {
    const minute = minuteOf(atMs);
    if (minute !== this.minute) {
      this.minute = minute;
      this.sent.clear();
    }
    const key = [sourceId, eventName, field].join(SEP);
    const count = this.sent.get(key) ?? 0;
    if (count >= this.perMinute) return false;
    this.sent.set(key, count + 1);
    return true;
  }
}
