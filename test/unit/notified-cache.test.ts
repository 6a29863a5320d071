import { cachedDestinationReads, NotifiedCache } from '../../src/store/notified-cache';
import type { Destination, Store } from '../../src/store/types';

/**
 * The worker's caches (destinations, erasure checks) decide when a copy may be served instead of reading the store
 * (the rule: every attempt sees its destination as it is at send time). Each step below is one
 * event; `read` is a lookup at time `at` that misses and, when `keep` is given, remembers the value
 * read then with the generation of that lookup — or of an earlier one, for a read in flight.
 */
type Step =
  | { up: true }
  | { down: true }
  | { changed: string }
  | { changedAll: true }
  | { lookup: string; at: number; expect: 'hit' | 'miss' }
  | { startRead: string; as: string }
  | { finishRead: string; at: number; expectKept: boolean };

const cases: [string, number, Step[]][] = [
  ['serves nothing before LISTEN is in place', 5_000, [
    { startRead: 'd1', as: 'r' }, { finishRead: 'r', at: 0, expectKept: false }, { lookup: 'd1', at: 1, expect: 'miss' },
  ]],
  ['serves a copy while listening, within the TTL', 5_000, [
    { up: true }, { startRead: 'd1', as: 'r' }, { finishRead: 'r', at: 0, expectKept: true }, { lookup: 'd1', at: 4_999, expect: 'hit' },
  ]],
  ['reads again once the TTL has passed, even with no notification', 5_000, [
    { up: true }, { startRead: 'd1', as: 'r' }, { finishRead: 'r', at: 0, expectKept: true }, { lookup: 'd1', at: 5_000, expect: 'miss' },
  ]],
  ['drops a destination when its NOTIFY arrives, and only that one', 5_000, [
    { up: true },
    { startRead: 'd1', as: 'r1' }, { finishRead: 'r1', at: 0, expectKept: true },
    { startRead: 'd2', as: 'r2' }, { finishRead: 'r2', at: 0, expectKept: true },
    { changed: 'd1' }, { lookup: 'd1', at: 1, expect: 'miss' }, { lookup: 'd2', at: 1, expect: 'hit' },
  ]],
  ['does not keep a read that was in flight when a change was notified (it may hold the old row)', 5_000, [
    { up: true }, { startRead: 'd1', as: 'r' }, { changed: 'd1' }, { finishRead: 'r', at: 0, expectKept: false }, { lookup: 'd1', at: 1, expect: 'miss' },
  ]],
  ['keeps a read in flight when another key changes meanwhile (a new user\'s data key), not when its own does', 5_000, [
    { up: true }, { startRead: 'k1', as: 'r1' }, { startRead: 'k2', as: 'r2' }, { changed: 'k2' },
    { finishRead: 'r1', at: 0, expectKept: true }, { finishRead: 'r2', at: 0, expectKept: false },
    { lookup: 'k1', at: 1, expect: 'hit' }, { lookup: 'k2', at: 1, expect: 'miss' },
  ]],
  ['does not keep a read in flight across a notification naming no key', 5_000, [
    { up: true }, { startRead: 'k1', as: 'r1' }, { changed: 'k2' }, { changedAll: true }, { finishRead: 'r1', at: 0, expectKept: false },
  ]],
  ['counts more changed keys in flight than maxEntries (2 here) as a change to every key', 5_000, [
    { up: true }, { startRead: 'k1', as: 'r1' }, { changed: 'a' }, { changed: 'b' }, { changed: 'c' }, { finishRead: 'r1', at: 0, expectKept: false },
    { startRead: 'k1', as: 'r2' }, { finishRead: 'r2', at: 0, expectKept: true },
  ]],
  ['clears everything and bypasses the cache when the LISTEN connection drops', 5_000, [
    { up: true }, { startRead: 'd1', as: 'r' }, { finishRead: 'r', at: 0, expectKept: true },
    { down: true }, { lookup: 'd1', at: 1, expect: 'miss' },
    { startRead: 'd1', as: 'r2' }, { finishRead: 'r2', at: 2, expectKept: false }, { lookup: 'd1', at: 3, expect: 'miss' },
  ]],
  ['does not keep a read in flight across a drop and a reconnect (changes in between went unseen)', 5_000, [
    { up: true }, { startRead: 'd1', as: 'r' }, { down: true }, { up: true }, { finishRead: 'r', at: 0, expectKept: false },
  ]],
  ['caches again once LISTEN is back, starting empty', 5_000, [
    { up: true }, { startRead: 'd1', as: 'r' }, { finishRead: 'r', at: 0, expectKept: true },
    { down: true }, { up: true }, { lookup: 'd1', at: 1, expect: 'miss' },
    { startRead: 'd1', as: 'r2' }, { finishRead: 'r2', at: 1, expectKept: true }, { lookup: 'd1', at: 2, expect: 'hit' },
  ]],
  ['drops every entry on a notification naming none (a regulation erased ids)', 5_000, [
    { up: true },
    { startRead: 'u1', as: 'r1' }, { finishRead: 'r1', at: 0, expectKept: true },
    { startRead: 'u2', as: 'r2' }, { finishRead: 'r2', at: 0, expectKept: true },
    { changedAll: true }, { lookup: 'u1', at: 1, expect: 'miss' }, { lookup: 'u2', at: 1, expect: 'miss' },
  ]],
  ['keeps at most maxEntries (2 here), dropping the oldest', 5_000, [
    { up: true },
    { startRead: 'a', as: 'ra' }, { finishRead: 'ra', at: 0, expectKept: true },
    { startRead: 'b', as: 'rb' }, { finishRead: 'rb', at: 0, expectKept: true },
    { startRead: 'c', as: 'rc' }, { finishRead: 'rc', at: 0, expectKept: true },
    { lookup: 'a', at: 1, expect: 'miss' }, { lookup: 'b', at: 1, expect: 'hit' }, { lookup: 'c', at: 1, expect: 'hit' },
  ]],
  ['a TTL of 0 caches nothing', 0, [
    { up: true }, { startRead: 'd1', as: 'r' }, { finishRead: 'r', at: 0, expectKept: false }, { lookup: 'd1', at: 0, expect: 'miss' },
  ]],
];

describe('NotifiedCache', () => {
  it.each(cases)('%s', (_name, ttlMs, steps) => {
    const cache = new NotifiedCache<string>(ttlMs, 2);
    const reads = new Map<string, { id: string; generation: number }>();
    for (const step of steps) {
      if ('up' in step) cache.listenerUp();
      else if ('down' in step) cache.listenerDown();
      else if ('changed' in step) cache.changed(step.changed);
      else if ('changedAll' in step) cache.changedAll();
      else if ('lookup' in step) expect(cache.lookup(step.lookup, step.at).hit ? 'hit' : 'miss').toBe(step.expect);
      else if ('startRead' in step) {
        const found = cache.lookup(step.startRead, -1);
        if (found.hit) throw new Error('startRead expects a miss');
        reads.set(step.as, { id: step.startRead, generation: found.generation });
      } else {
        const read = reads.get(step.finishRead)!;
        expect(cache.remember(read.id, `value of ${read.id}`, read.generation, step.at)).toBe(step.expectKept);
      }
    }
  });
});

describe('cachedDestinationReads', () => {
  it('reads the store on a miss, serves the copy on a hit, and reads again after a change', async () => {
    let reads = 0;
    let enabled = true;
    const destinations = { get: async (id: string) => (reads++, { id, enabled } as Destination) } as unknown as Store['destinations'];
    const cache = new NotifiedCache<Destination | undefined>(5_000);
    cache.listenerUp();
    const cached = cachedDestinationReads(destinations, cache, () => 0);
    expect((await cached.get('d1'))?.enabled).toBe(true);
    expect((await cached.get('d1'))?.enabled).toBe(true);
    expect(reads).toBe(1);
    enabled = false;
    cache.changed('d1');
    expect((await cached.get('d1'))?.enabled).toBe(false);
    expect(reads).toBe(2);
  });
});
