import { BoundedMap } from '../bounded-map';
import { minuteOf } from '../delivery/webhook-health';
import type { ViolationCount, ViolationUser } from '../store/types';
import type { Violation } from './violations';
import { boundedName } from './violation-bounds';

const SEP = '\u0000';

/** Kinds (source, minute, event, field, violation type) the aggregator keeps between two flushes. */
export const MAX_AGGREGATE_KEYS = 10_000;

/** The event type, event name and field of the row that counts the kinds past MAX_AGGREGATE_KEYS. */
export const OVERFLOW_NAME = '(other)';
/** Room kept beyond the aggregator's kinds for the overflow rows themselves. */
const OVERFLOW_ROOM = 1_000;

/** Where a violation was seen: the message's call type, its event (track) or page/screen name, its id, and whose it is (userId, anonymousId). */
export interface ViolatingMessage {
  type: string;
  eventName: string;
  messageId: string;
  userIds?: readonly string[];
}

/** What one flush writes: the counts, and which users each (source, minute) counted. */
export interface ViolationBatch {
  counts: ViolationCount[];
  users: ViolationUser[];
}

/**
 * Violations added up in memory per (source, minute, event type, event name, field, violation
 * type) until a flush writes them (violation-recorder.ts): the ingest path pays a map update, never
 * a write. Pure: no clock, no I/O.
 */
export class ViolationAggregator {
  private readonly counts: BoundedMap<string, ViolationCount>;
  /** (source, minute, user id) keys; past maxKeys a bucket's new users are one "any user" key, so a regulation still finds the bucket. */
  private readonly users = new Map<string, ViolationUser>();

  /** Past `maxKeys` kinds between two flushes, a new kind is counted in its source's and minute's overflow row (OVERFLOW_NAME). */
  constructor(private readonly maxKeys: number = MAX_AGGREGATE_KEYS) {
    // The overflow rows (one per source and minute) are beyond maxKeys: room for them, so folding never evicts a count.
    this.counts = new BoundedMap<string, ViolationCount>(maxKeys + OVERFLOW_ROOM);
  }

  get size(): number {
    return this.counts.size;
  }

  add(sourceId: string, message: ViolatingMessage, violations: readonly Violation[], atMs: number): void {
    const minute = minuteOf(atMs);
    const at = new Date(atMs).toISOString();
    if (violations.length > 0) for (const userId of message.userIds ?? []) this.addUser({ sourceId, minute, userId });
    for (const { field, violationType, description } of violations) {
      this.addCount({ sourceId, minute, eventType: message.type, eventName: boundedName(message.eventName), field, violationType, description, count: 1, firstSeenAt: at, lastSeenAt: at, lastMessageId: message.messageId });
    }
  }

  private addCount(given: ViolationCount): void {
    let row = given;
    let key = [row.sourceId, row.minute, row.eventType, row.eventName, row.field, row.violationType].join(SEP);
    let seen = this.counts.get(key);
    if (!seen && this.counts.size >= this.maxKeys) {
      row = { ...given, eventType: OVERFLOW_NAME, eventName: OVERFLOW_NAME, field: OVERFLOW_NAME, violationType: 'Other', description: `violations past the ${this.maxKeys} kinds counted between two writes` };
      key = [row.sourceId, row.minute, OVERFLOW_NAME].join(SEP);
      seen = this.counts.get(key);
    }
    if (!seen) {
      this.counts.set(key, { ...row });
      return;
    }
    seen.count += row.count;
    if (row.firstSeenAt < seen.firstSeenAt) seen.firstSeenAt = row.firstSeenAt;
    if (row.lastSeenAt >= seen.lastSeenAt) Object.assign(seen, { lastSeenAt: row.lastSeenAt, lastMessageId: row.lastMessageId, description: row.description });
  }

  private addUser(user: ViolationUser): void {
    const key = [user.sourceId, user.minute, user.userId ?? ''].join(SEP);
    if (this.users.has(key)) return;
    if (this.users.size < this.maxKeys || user.userId === undefined) {
      this.users.set(key, user);
      return;
    }
    this.addUser({ sourceId: user.sourceId, minute: user.minute });
  }

  drain(): ViolationBatch {
    const counts = [...this.counts].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, row]) => row);
    const users = [...this.users.values()];
    this.counts.clear();
    this.users.clear();
    return { counts, users };
  }

  restore(batch: ViolationBatch): void {
    for (const row of batch.counts) this.addCount(row);
    for (const user of batch.users) this.addUser(user);
  }
}

/** Distinct (source, rule, violation type) keys the cap keeps a minute; past it every new key shares one overflow key. */
export const MAX_CAP_KEYS = 10_000;

/**
 * At most `perKey` Violation Generated events per (source, rule, violation type) a minute, and at
 * most `perSource` per source a minute whatever their keys; the rest are suppressed and counted by
 * the caller. One bad release, or one hostile event, must not multiply traffic. The rule is the
 * event's name (a track) or its call type, a sender's choice: past MAX_CAP_KEYS keys in a minute a
 * new key counts under one overflow key, so the map stays bounded. Pure: the caller passes the time.
 */
export class ViolationCap {
  private minute = -1;
  private readonly sent = new Map<string, number>();
  private readonly perSourceSent = new Map<string, number>();

  constructor(
    private readonly perKey: number,
    private readonly perSource: number = perKey * 100,
    private readonly maxKeys: number = MAX_CAP_KEYS,
  ) {}

  /** Whether one more may go for this key in the minute of `atMs`. */
  allow(sourceId: string, rule: string, violationType: string, atMs: number): boolean {
    const minute = minuteOf(atMs);
    if (minute !== this.minute) {
      this.minute = minute;
      this.sent.clear();
      this.perSourceSent.clear();
    }
    const total = this.perSourceSent.get(sourceId) ?? 0;
    if (total >= this.perSource) return false;
    const named = [sourceId, rule, violationType].join(SEP);
    const key = this.sent.has(named) || this.sent.size < this.maxKeys ? named : OVERFLOW;
    const count = this.sent.get(key) ?? 0;
    if (count >= this.perKey) return false;
    this.sent.set(key, count + 1);
    // Sources are bounded by configuration, not by senders: this map needs no bound of its own.
    this.perSourceSent.set(sourceId, total + 1);
    return true;
  }
}

const OVERFLOW = '\u0001overflow';
