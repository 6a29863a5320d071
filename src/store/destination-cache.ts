import type { Destination, Store } from './types';

/**
 * A worker's short-lived copy of the destinations its attempts read, for PostgreSQL, where each
 * read is a network round trip. The rule it must keep: every attempt sees its destination as it is
 * at send time (switched off, a new secret, a URL gone). So an entry is only ever served while the
 * store's LISTEN connection is up (destination-changes.ts): every change NOTIFYs the destination id
 * at commit and drops its entry here. While that connection is down, or not up yet, nothing is
 * cached and every read goes to the database. The TTL bounds the age of an entry if a notification
 * were lost anyway (a connection that died silently, before TCP keep-alive notices).
 *
 * This class decides; it does no I/O and reads no clock (callers pass `now`), so the decisions are
 * a table test (test/unit/destination-cache.test.ts).
 */
export class DestinationCache<T = Destination | undefined> {
  private readonly entries = new Map<string, { value: T; expiresAt: number }>();
  private listening = false;
  /**
   * Bumped by every invalidation. A read remembers the generation it started in and is kept only
   * if nothing was invalidated meanwhile: a read that began before a change committed may return
   * the old row, and its NOTIFY may arrive before the read does.
   */
  private generation = 0;
  hits = 0;
  misses = 0;

  constructor(readonly ttlMs: number) {}

  /** The entry if it may be served now; otherwise a miss, with the generation to hand to `remember`. */
  lookup(id: string, now: number): { hit: true; value: T } | { hit: false; generation: number } {
    const entry = this.listening ? this.entries.get(id) : undefined;
    if (entry && entry.expiresAt > now) {
      this.hits++;
      return { hit: true, value: entry.value };
    }
    if (entry) this.entries.delete(id);
    this.misses++;
    return { hit: false, generation: this.generation };
  }

  /** Keeps a value read from the database; false (and nothing kept) when it may already be stale. */
  remember(id: string, value: T, generation: number, now: number): boolean {
    if (!this.listening || generation !== this.generation || this.ttlMs <= 0) return false;
    this.entries.set(id, { value, expiresAt: now + this.ttlMs });
    return true;
  }

  /** A NOTIFY for this destination: it changed, or was created or deleted. */
  changed(id: string): void {
    this.generation++;
    this.entries.delete(id);
  }

  /** LISTEN is in place: from now on every change reaches `changed`, so entries may be served. */
  listenerUp(): void {
    this.generation++;
    this.entries.clear();
    this.listening = true;
  }

  /** The LISTEN connection is gone: changes may go unseen, so forget everything and cache nothing. */
  listenerDown(): void {
    this.generation++;
    this.entries.clear();
    this.listening = false;
  }

  get size(): number {
    return this.entries.size;
  }

  get isListening(): boolean {
    return this.listening;
  }
}

/** The destination store with `get` (what every attempt calls) served through the cache. */
export function cachedDestinationReads(destinations: Store['destinations'], cache: DestinationCache, clock: () => number = Date.now): Store['destinations'] {
  return {
    ...destinations,
    async get(id) {
      const found = cache.lookup(id, clock());
      if (found.hit) return found.value;
      const destination = await destinations.get(id);
      cache.remember(id, destination, found.generation, clock());
      return destination;
    },
  };
}
