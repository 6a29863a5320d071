/**
 * A map with a stated bound, for every cache keyed by input (a plan id, a write key, a violation's
 * field, an OAuth2 endpoint): whoever makes one says how many entries it may hold, where it is
 * made, and past that the least recently used entry goes. Input-keyed state can then never grow
 * with what senders choose to send. `isFull` lets a caller that must not forget (a counter not yet
 * written) fold a new key into an overflow key instead of evicting.
 */
export class BoundedMap<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(
    readonly maxEntries: number,
    private readonly evicted: (key: K, value: V) => void = () => undefined,
  ) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new RangeError(`a bounded map holds at least one entry (got ${maxEntries})`);
  }

  get size(): number {
    return this.entries.size;
  }

  /** Whether a new key would evict one. */
  get isFull(): boolean {
    return this.entries.size >= this.maxEntries;
  }

  has(key: K): boolean {
    return this.entries.has(key);
  }

  /** The value, made the most recently used. */
  get(key: K): V | undefined {
    if (!this.entries.has(key)) return undefined;
    const value = this.entries.get(key) as V;
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  /** Sets the value as the most recently used, evicting the least recently used past the bound. */
  set(key: K, value: V): this {
    this.entries.delete(key);
    this.entries.set(key, value);
    while (this.entries.size > this.maxEntries) {
      const [oldest, oldValue] = this.entries.entries().next().value as [K, V];
      this.entries.delete(oldest);
      this.evicted(oldest, oldValue);
    }
    return this;
  }

  delete(key: K): boolean {
    return this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  /** Entries oldest first (reading them changes no recency). */
  [Symbol.iterator](): IterableIterator<[K, V]> {
    return this.entries[Symbol.iterator]();
  }

  values(): IterableIterator<V> {
    return this.entries.values();
  }
}
