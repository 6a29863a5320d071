/**
 * What reading a destination at send time costs the worker: `store.destinations.get`, the lookup
 * every attempt makes (so a new secret, new headers or switching a destination off apply to the next
 * attempt), and per attempt with the erased-ids check beside it (`store.erasures.erasedAt` of the
 * message's user id, for a user checked moments ago and for one never checked). On a SQLite file like the worker's by default; on PostgreSQL with
 * `--database-url` (a database the bench may fill: it creates its own rows), uncached or through
 * the worker's LISTEN/NOTIFY caches (destinations, erasure checks) with `--cache-ttl`. docs/performance.md has figures.
 *
 *   npx tsx bench/settings-lookup.ts [--lookups 20000] [--destinations 1000]
 *   npx tsx bench/settings-lookup.ts --database-url postgres://… [--cache-ttl 5000]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { openStore, type Store } from '../src/store';

const option = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const arg = (name: string, fallback: number) => Number(option(name) ?? fallback);

/** µs of wall and CPU time per call of `work` over `count` calls. */
async function measure(count: number, work: (i: number) => Promise<unknown>): Promise<{ wallUs: number; cpuUs: number }> {
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < count; i++) await work(i);
  const wallUs = ((performance.now() - started) * 1000) / count;
  const cpu = process.cpuUsage(cpuBefore);
  return { wallUs, cpuUs: (cpu.user + cpu.system) / count };
}

async function main(): Promise<void> {
  const lookups = arg('lookups', 20_000);
  const destinations = arg('destinations', 1_000);
  const databaseUrl = option('database-url');
  const cacheTtlMs = arg('cache-ttl', 0);
  const dir = databaseUrl ? undefined : mkdtempSync(path.join(os.tmpdir(), 'switchyard-lookup-'));
  const store: Store = await openStore({ databasePath: dir ? path.join(dir, 'switchyard.db') : '', databaseUrl, destinationCacheTtlMs: cacheTtlMs });
  try {
    const ids: string[] = [];
    for (let i = 0; i < destinations; i++) {
      const { source } = await store.sources.create(`source ${i}`);
      const destination = await store.destinations.create(source.id, {
        enabled: true,
        sharedSecret: 'secret',
        webhooks: [{ url: `https://hooks.example.com/${i}`, headers: { authorization: 'Bearer x' } }, { url: `https://backup.example.com/${i}`, headers: {} }],
      });
      ids.push(destination.id);
    }
    // Some erased ids, so the check looks up a real index, not an empty table.
    await store.erasures.add(Array.from({ length: 1_000 }, (_, i) => `erased-${i}`), new Date().toISOString());
    const id = (i: number) => ids[(i * 7919) % ids.length];
    for (let i = 0; i < 1_000; i++) await store.destinations.get(ids[i % ids.length]); // warm-up
    const lookup = await measure(lookups, (i) => store.destinations.get(id(i)));
    // An attempt also checks the message's user against erased ids: a user checked moments ago (a
    // retry, an active user; served from the erasure cache where there is one) or one never seen.
    for (let i = 0; i < 100; i++) await store.erasures.erasedAt([`user-${i}`]); // warm-up
    const attemptSeen = await measure(lookups, async (i) => {
      await store.erasures.erasedAt([`user-${i % 100}`]);
      await store.destinations.get(id(i));
    });
    const attemptNew = await measure(lookups, async (i) => {
      await store.erasures.erasedAt([`new-user-${i}`]);
      await store.destinations.get(id(i));
    });
    const where = databaseUrl ? `PostgreSQL${cacheTtlMs > 0 ? `, worker caches (TTL ${cacheTtlMs} ms)` : ', no cache'}` : 'SQLite file';
    const line = (m: { wallUs: number; cpuUs: number }) => `${m.wallUs.toFixed(1)} µs wall, ${m.cpuUs.toFixed(1)} µs CPU`;
    console.log(`${where}: ${lookups} lookups over ${destinations} destinations`);
    console.log(`  destinations.get:                          ${line(lookup)}`);
    console.log(`  per attempt, user checked moments ago:     ${line(attemptSeen)}`);
    console.log(`  per attempt, user not checked before:      ${line(attemptNew)}`);
  } finally {
    await store.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
