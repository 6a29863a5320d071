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
 */
export class OpenedValues<T> {
  private readonly values = new Map<string, { sealed: string; value: T }>();

  constructor(private readonly limit: number) {}

  /** `open()`'s plaintext of `sealed` (the row `id`'s sealed text as just read), opened once per text. */
  open(id: string, sealed: string, open: () => T): T {
    const known = this.values.get(id);
    if (known?.sealed === sealed) return known.value;
    const value = open();
    this.values.delete(id);
    if (this.values.size >= this.limit) this.values.delete(this.values.keys().next().value!);
    this.values.set(id, { sealed, value });
    return value;
  }

  /** Drops what was opened for these ids (their rows were deleted here: no plaintext of them stays). */
  forget(ids: Iterable<string>): void {
    for (const id of ids) this.values.delete(id);
  }
}
