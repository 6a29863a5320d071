/**
 * What reading a destination at send time costs the worker: `store.destinations.get`, the lookup
 * every attempt makes (so a new secret, new headers or switching a destination off apply to the next
 * attempt), on a SQLite file like the worker's. docs/performance.md compares it with a message's
 * whole CPU cost to decide whether a cache is worth its staleness.
 *
 *   npx tsx bench/settings-lookup.ts [--lookups 20000] [--destinations 1000]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { openStore } from '../src/store';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};

async function main(): Promise<void> {
  const lookups = arg('lookups', 20_000);
  const destinations = arg('destinations', 1_000);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-lookup-'));
  const store = await openStore({ databasePath: path.join(dir, 'switchyard.db') });
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
    for (let i = 0; i < 1_000; i++) await store.destinations.get(ids[i % ids.length]); // warm-up
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    for (let i = 0; i < lookups; i++) await store.destinations.get(ids[(i * 7919) % ids.length]);
    const wallUs = ((performance.now() - started) * 1000) / lookups;
    const cpu = process.cpuUsage(cpuBefore);
    const cpuUs = (cpu.user + cpu.system) / lookups;
    console.log(`${lookups} lookups over ${destinations} destinations: ${wallUs.toFixed(1)} µs wall, ${cpuUs.toFixed(1)} µs CPU per lookup`);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
