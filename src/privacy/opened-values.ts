/**
 * Sealed values already opened, each under the id of the row it was read from, with the sealed
 * text it was opened from. Opening the same sealed text under the same keys gives the same plaintext
 * every time (AES-GCM authenticates or fails, deterministically), and every attempt reads its
 * destination's credentials and its user's data key again, unchanged between writes: decrypting
 * them again was most of what those reads cost in Switchyard's own code (docs/performance.md). This
 * holds no row: the caller reads the row first, every time, and passes what it found; a row
 * changed (a rotated secret, a re-wrapped key) is another text and opens anew, and a row gone
 * (a destination deleted, a data key destroyed by a regulation) is never asked about.
 * Bounded: past `limit` ids the oldest entry goes.
 *
 * A row gone must not leave its plaintext here either, in this process or
 * any other (a heap or core dump after an erasure would still hold the key crypto-shredding says is
 * gone). The process that deletes the row forgets it at once, a process told by a store
 * notification forgets it then (store-notifications.ts), and every entry goes `maxAgeMs` after it
 * was opened whatever happens (SQLite has no notifications): a timer sweeps while any is held.
 */
export class OpenedValues<T> {
  private readonly values = new Map<string, { sealed: string; value: T; openedAtMs: number }>();
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly limit: number,
    private readonly maxAgeMs = OPENED_MAX_AGE_MS,
    private readonly clock: () => number = Date.now,
  ) {}

  /** `open()`'s plaintext of `sealed` (the row `id`'s sealed text as just read), opened once per text and at most `maxAgeMs` ago. */
  open(id: string, sealed: string, open: () => T): T {
    const now = this.clock();
    this.sweep(now);
    const known = this.values.get(id);
    if (known?.sealed === sealed) return known.value;
    const value = open();
    this.values.delete(id);
    if (this.values.size >= this.limit) this.values.delete(this.values.keys().next().value!);
    // Kept in the order opened: the oldest first, where sweep() looks.
    this.values.set(id, { sealed, value, openedAtMs: now });
    this.keepSweeping();
    return value;
  }

  /** Drops what was opened for these ids (their rows were deleted, here or in another process: no plaintext of them stays). */
  forget(ids: Iterable<string>): void {
    for (const id of ids) this.values.delete(id);
    if (this.values.size === 0) this.stopSweeping();
  }

  /** Drops everything (a notification channel lost: changes may have gone unseen). */
  forgetAll(): void {
    this.values.clear();
    this.stopSweeping();
  }

  /** How many values are held (for tests). */
  get size(): number {
    return this.values.size;
  }

  /** Drops every entry opened `maxAgeMs` or longer ago. */
  sweep(now = this.clock()): void {
    for (const [id, entry] of this.values) {
      if (now - entry.openedAtMs < this.maxAgeMs) break;
      this.values.delete(id);
    }
    if (this.values.size === 0) this.stopSweeping();
  }

  private keepSweeping(): void {
    if (this.sweeper !== undefined) return;
    // Unref'd: a held value never keeps a process alive, and an idle process still forgets.
    this.sweeper = setInterval(() => this.sweep(), Math.max(1_000, Math.ceil(this.maxAgeMs / 2)));
    this.sweeper.unref();
  }

  private stopSweeping(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }
}

/**
 * How long an opened data key or credential stays in memory after it was opened: long enough that
 * a busy user's or destination's attempts unwrap it about once a minute (microseconds each), short
 * enough that a key destroyed where no notification tells (SQLite, an API without a listener) is
 * gone from every process within it.
 */
export const OPENED_MAX_AGE_MS = 60_000;
