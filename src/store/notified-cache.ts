import type { Kysely } from 'kysely';
import { BoundedMap } from '../bounded-map';
import type { Suppression } from '../delivery/suppression';
import { erasedAtEach, type ErasedIdHashes } from './erasures';
import { ListenedChanges } from './listened-changes';
import { suppressionsByHash } from './suppressions';
import type { Tables } from './tables';
import type { Destination, Store } from './types';

/**
 * A worker's short-lived copy of what its attempts read at send time — the destination, and
 * whether a regulation erased the message's user — for PostgreSQL, where each read is a network
 * round trip. The rule it must keep: every attempt sees them as they are at send time (switched
 * off, a new secret, a URL gone, a user just erased). So an entry is only ever served while the
 * store's LISTEN connection is up (store-notifications.ts): every change NOTIFYs at commit and drops
 * the entries it touches. While that connection is down, or not up yet, nothing is cached and every
 * read goes to the database. The TTL bounds the age of an entry if a notification were lost anyway
 * (a connection that died silently, before TCP keep-alive notices).
 *
 * This class decides; it does no I/O and reads no clock (callers pass `now`), so the decisions are
 * a table test (test/unit/notified-cache.test.ts).
 */
export class NotifiedCache<T> extends ListenedChanges {
  /** Values typed unknown here (a bounded map is invariant in its values); `lookup` gives them back as T. */
  private readonly entries: BoundedMap<string, { value: unknown; expiresAt: number }>;
  /**
   * Bumped by every invalidation. A read remembers the generation it started in and is kept only
   * if its key (or everything) was not invalidated meanwhile: a read that began before a change
   * committed may return the old row, and its NOTIFY may arrive before the read does. A change to
   * another key does not discard it: with a notification per new user's data key, reads in flight
   * would otherwise rarely be kept.
   */
  private generation = 0;
  /** The generation of the last invalidation of everything. */
  private allChangedAt = 0;
  /** Since then, the generation at which each key changed (at most maxEntries; beyond, as everything). */
  private readonly keyChangedAt = new Map<string, number>();
  hits = 0;
  misses = 0;

  /** `maxEntries`: beyond it the oldest entry goes (one per user id seen, for erasures). */
  constructor(
    readonly ttlMs: number,
    readonly maxEntries = 100_000,
  ) {
    super();
    this.entries = new BoundedMap(maxEntries);
  }

  /** The entry if it may be served now; otherwise a miss, with the generation to hand to `remember`. */
  lookup(key: string, now: number): { hit: true; value: T } | { hit: false; generation: number } {
    const entry = this.listening ? this.entries.get(key) : undefined;
    if (entry && entry.expiresAt > now) {
      this.hits++;
      return { hit: true, value: entry.value as T };
    }
    if (entry) this.entries.delete(key);
    this.misses++;
    return { hit: false, generation: this.generation };
  }

  /** Keeps a value read from the database; false (and nothing kept) when it may already be stale. */
  remember(key: string, value: T, generation: number, now: number): boolean {
    if (!this.listening || this.ttlMs <= 0 || this.allChangedAt > generation || (this.keyChangedAt.get(key) ?? 0) > generation) return false;
    this.entries.set(key, { value, expiresAt: now + this.ttlMs });
    return true;
  }

  /** A NOTIFY naming one key (a destination id): it changed, or was created or deleted. */
  changed(key: string): void {
    this.generation++;
    this.entries.delete(key);
    this.keyChangedAt.delete(key);
    if (this.keyChangedAt.size >= this.maxEntries) {
      this.allChangedAt = this.generation;
      this.keyChangedAt.clear();
    } else this.keyChangedAt.set(key, this.generation);
  }

  /**
   * A NOTIFY naming no key (a regulation erased ids), or the listener coming or going: anything may
   * have changed, so everything is forgotten (and, while the listener is down, nothing is kept).
   */
  changedAll(): void {
    this.generation++;
    this.allChangedAt = this.generation;
    this.keyChangedAt.clear();
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}

/** The destination store with `get` (what every attempt calls) served through the cache. */
export function cachedDestinationReads(destinations: Store['destinations'], cache: NotifiedCache<Destination | undefined>, clock: () => number = Date.now): Store['destinations'] {
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

/**
 * One-way id hashes → their rows, each hash served from `cache` when it may be, the rest read in
 * one go through `read` and remembered, absence included (the usual answer).
 */
async function readThroughByHash<T>(cache: NotifiedCache<T | undefined>, idHashes: string[], read: (hashes: string[]) => Promise<Map<string, T>>, clock: () => number): Promise<T[]> {
  const found: T[] = [];
  const missing: string[] = [];
  let generation = 0;
  for (const hash of new Set(idHashes)) {
    const entry = cache.lookup(hash, clock());
    if (entry.hit) {
      if (entry.value !== undefined) found.push(entry.value);
    } else {
      missing.push(hash);
      generation = entry.generation;
    }
  }
  if (missing.length > 0) {
    const rows = await read(missing);
    const now = clock();
    for (const hash of missing) {
      const row = rows.get(hash);
      cache.remember(hash, row, generation, now);
      if (row !== undefined) found.push(row);
    }
  }
  return found;
}

/**
 * The erasure store with `erasedAt` (what every attempt about a user calls) served through the
 * cache: one entry per id, keyed by its one-way hash like the table, holding when it was erased or
 * that it was not (the usual answer).
 */
export function cachedErasureReads(db: Kysely<Tables>, erasures: Store['erasures'], cache: NotifiedCache<string | undefined>, hashes: ErasedIdHashes, clock: () => number = Date.now): Store['erasures'] {
  return {
    ...erasures,
    async erasedAt(ids) {
      const times = await readThroughByHash(cache, ids.flatMap(hashes), (missing) => erasedAtEach(db, missing), clock);
      return times.sort().at(-1);
    },
  };
}

/**
 * The suppression store with `of` (what every attempt about a user calls) served through
 * the cache, one entry per id hash like the erasure checks; the erasure channel's NOTIFY empties it.
 */
export function cachedSuppressionReads(db: Kysely<Tables>, suppressions: Store['suppressions'], cache: NotifiedCache<Suppression | undefined>, hashes: ErasedIdHashes, clock: () => number = Date.now): Store['suppressions'] {
  return {
    ...suppressions,
    of: (ids) => readThroughByHash(cache, ids.flatMap(hashes), (missing) => suppressionsByHash(db, missing), clock),
  };
}

/**
 * The data-key store with `get` (what every sealed attempt calls) served through the cache: the
 * unwrapped key of a subject, or `null` for none (destroyed, or never made). A destroy, a new key
 * or a re-wrap anywhere NOTIFYs that subject's hash, which drops its entry at once.
 */
export function cachedDataKeyReads(dataKeys: Store['dataKeys'], cache: NotifiedCache<Buffer | null>, clock: () => number = Date.now): Store['dataKeys'] {
  return {
    ...dataKeys,
    async get(subjectHash) {
      const found = cache.lookup(subjectHash, clock());
      if (found.hit) return found.value ?? undefined;
      const key = await dataKeys.get(subjectHash);
      cache.remember(subjectHash, key ?? null, found.generation, clock());
      return key;
    },
  };
}
