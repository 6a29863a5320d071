import { ListenedChanges } from './listened-changes';

/**
 * A small table held whole in memory and read again, whole, after a change: on PostgreSQL a
 * NOTIFY (store-notifications.ts), in this process a change it made itself, and otherwise (SQLite,
 * where other processes' writes cannot be heard, or while the LISTEN connection is down) once the
 * copy is `unnotifiedForMs` old. For tables of a few rows read on a hot path: the write-key
 * directory (write-key-directory.ts) and the operational endpoints (operational-endpoint-copy.ts).
 *
 * This class decides; it does no I/O and reads no clock (callers pass `now`), so its decisions are a
 * table test (test/unit/write-key-directory.test.ts).
 */
export class WholeTableCopy<T> extends ListenedChanges {
  private copy: T;
  /** Bumped by every change; a reading is current only if none came since it began. */
  private generation = 1;
  private readGeneration = 0;
  private readAt = Number.NEGATIVE_INFINITY;

  constructor(
    empty: T,
    readonly unnotifiedForMs: number,
  ) {
    super();
    this.copy = empty;
  }

  /** Whether the table must be read again before the copy answers. */
  needsReading(now: number): boolean {
    if (this.readGeneration !== this.generation) return true;
    return !this.listening && now - this.readAt >= this.unnotifiedForMs;
  }

  /** The generation to hand to `read` once a reading of the table, begun now, comes back. */
  get readingGeneration(): number {
    return this.generation;
  }

  /** A reading of the whole table, begun at `generation`. */
  read(copy: T, generation: number, now: number): void {
    this.copy = copy;
    this.readGeneration = generation;
    this.readAt = now;
  }

  /** The table as of the last reading. */
  get value(): T {
    return this.copy;
  }

  /** A change was heard (a NOTIFY, or a change this process committed); also the listener coming or going. */
  changedAll(): void {
    this.generation++;
  }
}

/**
 * The copy, read again first when it says so: one reading at a time, shared by every caller that
 * asks meanwhile, and repeated while a change came in during it.
 */
export function currentCopy<T>(copy: WholeTableCopy<T>, readAll: () => Promise<T>, clock: () => number = Date.now): () => Promise<T> {
  let reading: Promise<void> | undefined;
  return async () => {
    while (copy.needsReading(clock())) {
      reading ??= (async () => {
        const generation = copy.readingGeneration;
        try {
          copy.read(await readAll(), generation, clock());
        } finally {
          reading = undefined;
        }
      })();
      await reading;
    }
    return copy.value;
  };
}
