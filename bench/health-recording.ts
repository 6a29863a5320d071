/**
 * What webhook health costs a worker, in parts: `record` on every attempt's path (a map lookup and a
 * few additions in memory), and one flush (the buckets of an interval added to the store in one
 * transaction), on a SQLite file like the worker's by default, or PostgreSQL with `--database-url`.
 * The end-to-end comparison is `npm run bench` with and without HEALTH_FLUSH_INTERVAL=0;
 * docs/performance.md has both.
 *
 *   npx tsx bench/health-recording.ts [--attempts 200000] [--urls 500] [--flushes 20]
 *   npx tsx bench/health-recording.ts --database-url postgres://…
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { HealthRecorder } from '../src/activities/health-recorder';
import type { AttemptOutcome } from '../src/delivery/types';
import { openStore } from '../src/store';

const option = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const arg = (name: string, fallback: number) => Number(option(name) ?? fallback);

const OUTCOMES: AttemptOutcome[] = [
  { kind: 'success', status: 200 },
  { kind: 'success', status: 204 },
  { kind: 'success', status: 200 },
  { kind: 'retry', status: 503, reason: 'HTTP 503' },
  { kind: 'permanent', status: 404, reason: 'HTTP 404' },
];

async function main(): Promise<void> {
  const attempts = arg('attempts', 200_000);
  const urls = arg('urls', 500);
  const flushes = arg('flushes', 20);
  const databaseUrl = option('database-url');
  const dir = databaseUrl ? undefined : mkdtempSync(path.join(os.tmpdir(), 'switchyard-health-bench-'));
  const store = await openStore({ databasePath: dir ? path.join(dir, 'switchyard.db') : '', databaseUrl });
  // A long interval: this bench calls flush itself.
  const recorder = new HealthRecorder(store, 3_600_000);
  const destination = (i: number) => `dst_${String(i % urls).padStart(32, '0')}`;
  const url = (i: number) => `https://hooks.example.com/${i % urls}/webhook`;
  try {
    const now = Date.now();
    for (let i = 0; i < 10_000; i++) recorder.record(destination(i), url(i), now, OUTCOMES[i % 5], i % 700); // warm-up
    await recorder.flush();

    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    for (let i = 0; i < attempts; i++) recorder.record(destination(i), url(i), now + (i % 60_000), OUTCOMES[i % 5], i % 700);
    const recordWallNs = ((performance.now() - started) * 1e6) / attempts;
    const recordCpu = process.cpuUsage(cpuBefore);
    const recordCpuNs = ((recordCpu.user + recordCpu.system) * 1000) / attempts;
    await recorder.flush();

    // One flush: every URL with attempts in one minute (what a busy worker has after an interval).
    const flushWall: number[] = [];
    const flushCpu: number[] = [];
    for (let f = 0; f < flushes; f++) {
      for (let i = 0; i < urls; i++) recorder.record(destination(i), url(i), now, OUTCOMES[i % 5], i % 700);
      const cpu = process.cpuUsage();
      const t = performance.now();
      await recorder.flush();
      flushWall.push(performance.now() - t);
      const used = process.cpuUsage(cpu);
      flushCpu.push((used.user + used.system) / 1000);
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    console.log(`store: ${databaseUrl ? 'PostgreSQL' : 'SQLite file'}; ${attempts} attempts over ${urls} URLs`);
    console.log(`record (every attempt): ${recordWallNs.toFixed(0)} ns wall, ${recordCpuNs.toFixed(0)} ns CPU per attempt`);
    console.log(`flush of ${urls} buckets (one per URL): median ${median(flushWall).toFixed(1)} ms wall, ${median(flushCpu).toFixed(1)} ms CPU (${flushes} flushes)`);
  } finally {
    await recorder.close();
    await store.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
