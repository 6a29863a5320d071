/**
 * The in-memory queue of encoded messages and the rule that cuts it into batches. Messages are
 * kept as the JSON text encoded at enqueue, so a batch body is a join, not a re-encode.
 */

export interface Queued {
  json: string;
  bytes: number;
}

/** `{"batch":[…],"sentAt":"…"}` built from already-encoded messages. */
export function encodeBatch(messages: readonly string[], sentAt: string): string {
  return `{"batch":[${messages.join(',')}],"sentAt":${JSON.stringify(sentAt)}}`;
}

/** Bytes of the envelope around the messages; `sentAt` is always a 24-character ISO timestamp. */
const ENVELOPE_BYTES = Buffer.byteLength(encodeBatch([], new Date(0).toISOString()));

/** Size of the request body for `count` messages totalling `messageBytes` (plus the commas between them). */
export function batchBytes(count: number, messageBytes: number): number {
  return ENVELOPE_BYTES + messageBytes + Math.max(0, count - 1);
}

export class MessageQueue<T extends Queued> {
  private items: T[] = [];
  private head = 0;
  private totalBytes = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  peek(): T | undefined {
    return this.items[this.head];
  }

  push(item: T): void {
    this.items.push(item);
    this.totalBytes += item.bytes;
  }

  /** Whether everything queued no longer fits in one request of `maxBytes` (seed: flush when the batch would pass 500 KB). */
  exceedsOneBatch(maxBytes: number): boolean {
    return batchBytes(this.length, this.totalBytes) > maxBytes;
  }

  /**
   * The next batch, oldest first: at most `maxCount` messages, and no more than fit in a body of
   * `maxBytes`. Always at least one message when any is queued (each is within the per-call limit).
   */
  take(maxCount: number, maxBytes: number): T[] {
    const batch: T[] = [];
    let bytes = 0;
    while (batch.length < maxCount && this.head < this.items.length) {
      const next = this.items[this.head];
      if (batch.length > 0 && batchBytes(batch.length + 1, bytes + next.bytes) > maxBytes) break;
      batch.push(next);
      bytes += next.bytes;
      this.head++;
    }
    this.totalBytes -= bytes;
    this.compact();
    return batch;
  }

  /** Everything queued, emptying the queue. */
  drain(): T[] {
    const all = this.items.slice(this.head);
    this.items = [];
    this.head = 0;
    this.totalBytes = 0;
    return all;
  }

  /** Drops taken slots once they dominate, keeping `take` O(batch) without unbounded growth. */
  private compact(): void {
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }
}
