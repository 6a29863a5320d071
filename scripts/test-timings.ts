/**
 * `npm run test:timings`: the slowest test files of the last run (.test-data/timings.json, written
 * by test/jest/timings-reporter.js on every Jest run). `-- --top 40` shows more, `-- --tests` each
 * file's slowest tests, `-- --cpu` orders by CPU seconds; `-- --save` writes
 * the run's durations to test/durations.json, the order test/jest/sequencer.js starts files in on a
 * machine without Jest's cache (a fresh clone, CI).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

interface Timings {
  startedAt: string;
  wallMs: number;
  suites: number;
  tests: number;
  files: Record<string, { ms: number; tests: number; failed: boolean; cpu?: Record<string, number>; slowest?: { ms: number; test: string }[] }>;
}

const ROOT = path.resolve(__dirname, '..');
const LAST_RUN = path.join(ROOT, '.test-data', 'timings.json');
const { values } = parseArgs({ options: { top: { type: 'string', default: '20' }, cpu: { type: 'boolean', default: false }, save: { type: 'boolean', default: false }, tests: { type: 'boolean', default: false } } });

if (!existsSync(LAST_RUN)) {
  console.error('No timings yet: run `npm test` (or any jest run) first; it writes .test-data/timings.json.');
  process.exit(1);
}
const run = JSON.parse(readFileSync(LAST_RUN, 'utf8')) as Timings;
const cpuOf = (cpu?: Record<string, number>) => Object.values(cpu ?? {}).reduce((sum, seconds) => sum + seconds, 0);
// `--cpu`: ordered by CPU seconds (this Jest worker and what the file started, its slot's worker, and
// the shared Temporal dev server and PostgreSQL while it ran), the figure to cut when side-by-side runs are CPU-bound.
const files = Object.entries(run.files).sort(([, a], [, b]) => (values.cpu ? cpuOf(b.cpu) - cpuOf(a.cpu) : b.ms - a.ms));
const total = files.reduce((sum, [, file]) => sum + file.ms, 0);
const totalCpu = files.reduce((sum, [, file]) => sum + cpuOf(file.cpu), 0);
console.log(`Run of ${run.startedAt}: ${run.suites} files, ${run.tests} tests, ${(run.wallMs / 1000).toFixed(0)} s wall, ${(total / 1000).toFixed(0)} s summed over files, ${totalCpu.toFixed(0)} CPU-s in integration files.`);
console.log(`\n${'s'.padStart(8)}  ${'cpu-s'.padStart(6)} (self worker temporal postgres)  tests  file`);
const split = (cpu?: Record<string, number>) => ['self', 'worker', 'temporal', 'postgres'].map((name) => (cpu?.[name] ?? 0).toFixed(0)).join(' ');
for (const [file, { ms, tests, failed, cpu, slowest }] of files.slice(0, Number(values.top))) {
  console.log(`${(ms / 1000).toFixed(1).padStart(8)}  ${cpuOf(cpu).toFixed(0).padStart(6)} (${split(cpu).padEnd(22)})  ${String(tests).padStart(5)}  ${file}${failed ? '  (failed)' : ''}`);
  // `--tests`: each file's slowest tests under it; what is left of the file's time is its set-up and tear-down.
  if (values.tests) for (const test of slowest ?? []) console.log(`${''.padStart(10)}${(test.ms / 1000).toFixed(1).padStart(8)}  ${test.test}`);
}
if (values.save) {
  const durations = Object.fromEntries(files.map(([file, { ms }]) => [file, Math.round(ms)]));
  writeFileSync(path.join(ROOT, 'test/durations.json'), `${JSON.stringify(durations, null, 1)}\n`);
  console.log('\nWrote test/durations.json.');
}
