/**
 * Prints the markdown table of bench/experiments.sh's results (docs/performance.md quotes it):
 *   npx tsx bench/experiments-table.ts [dir]
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { PhaseResult } from './phase';

interface ResultsFile {
  results: PhaseResult[];
}

const dir = process.argv[2] ?? 'bench/results/experiments';
const rows: string[] = [
  '| experiment | system | end-to-end msg/s | × bare | e2e p50 ms | ingest msg/s | CPU s / 1k: Temporal | worker | API | history events / msg | load before |',
  '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
];
for (const file of readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
  const run = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as ResultsFile;
  // <date>-<label>.json, the date being 2026-11-22T07-35-10Z
  const label = file.replace(/\.json$/, '').replace(/^[0-9T-]+Z-?/, '');
  const bare = run.results.find((r) => r.system === 'bare');
  for (const r of run.results) {
    const cpu = r.cost.cpuSecondsPer1000;
    const worker = r.system === 'bare' ? cpu.bareWorker : cpu.worker;
    const ratio = bare && r.system === 'switchyard' ? (r.endToEnd.messagesPerSecond / bare.endToEnd.messagesPerSecond).toFixed(2) : '';
    rows.push(
      `| ${label} | ${r.system} | ${r.endToEnd.messagesPerSecond} | ${ratio} | ${Math.round(r.endToEnd.latencyMs.p50)} | ${r.ingest.messagesPerSecond} | ${cpu.temporal} | ${worker} | ${r.system === 'switchyard' ? (cpu.api ?? 'in worker') : ''} | ${r.cost.historyEventsPerMessage ?? ''} | ${r.loadAverage.before[0]} |`,
    );
  }
}
console.log(rows.join('\n'));
