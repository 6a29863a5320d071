import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { SETTINGS } from '../../src/config';
import { ROOT } from '../helpers/processes';

/**
 * `npm run bench -- --quick` works end to end: its own Temporal dev server, worker, API and receiver,
 * all three systems, every message delivered, and the result file has the documented shape.
 * A benchmark is not a timed test: nothing here asserts a speed.
 */
const run = promisify(execFile);
let outDir: string;
beforeAll(() => {
  outDir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-bench-'));
});
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

interface Result {
  system: string;
  messages: number;
  delivered: number;
  missing: number;
  ingest: { messagesPerSecond: number; ackLatencyMs: Record<string, number> };
  endToEnd: { messagesPerSecond: number; latencyMs: Record<string, number> };
  cost: { cpuSecondsPer1000: Record<string, number>; peakRssMb: Record<string, number>; historyEventsPerMessage: number | null; dataGrowthKbPer1000: number | null };
}

it('runs the quick bench: raw ceiling, bare Temporal and Switchyard, every message delivered', async () => {
  // The bench starts its own system; the test run's Temporal address, store and queue must not leak into it.
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !Object.values(SETTINGS).some((s) => s.env === key)));
  const { stdout } = await run(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/run.ts'), '--quick', '--out-dir', outDir], { cwd: ROOT, env, maxBuffer: 16 * 1024 * 1024, timeout: 14 * 60_000 });
  const files = readdirSync(outDir);
  const json = files.find((f) => f.endsWith('.json'));
  expect(json).toBeDefined();
  expect(files).toContain(json!.replace(/\.json$/, '.svg'));
  expect(readFileSync(path.join(outDir, json!.replace(/\.json$/, '.svg')), 'utf8')).toMatch(/^<svg[^>]*>[\s\S]*End-to-end throughput[\s\S]*<\/svg>\s*$/);
  expect(stdout).toContain('| N | system | end-to-end msg/s | vs bare | vs raw |');

  const report = JSON.parse(readFileSync(path.join(outDir, json!), 'utf8'));
  expect(report).toMatchObject({ schema: 1, options: { messages: [1000], systems: ['raw', 'bare', 'switchyard'] } });
  expect(report.machine.uptimeBefore).toMatch(/load average/);
  const results = report.results as Result[];
  expect(results.map((r) => r.system).sort()).toEqual(['bare', 'raw', 'switchyard']);
  for (const r of results) {
    expect(r).toMatchObject({ messages: 1000, delivered: 1000, missing: 0 });
    for (const value of [r.ingest.messagesPerSecond, r.endToEnd.messagesPerSecond, r.endToEnd.latencyMs.p50, r.endToEnd.latencyMs.p99, r.ingest.ackLatencyMs.p99, r.cost.cpuSecondsPer1000.total]) {
      expect(value).toBeGreaterThan(0);
    }
  }
  const of = (system: string) => results.find((r) => r.system === system)!;
  expect(of('raw').cost.historyEventsPerMessage).toBeNull();
  expect(of('bare').cost.historyEventsPerMessage).toBeGreaterThan(0);
  expect(of('switchyard').cost.historyEventsPerMessage).toBeGreaterThan(0);
  expect(of('switchyard').cost.dataGrowthKbPer1000).toBeGreaterThan(0);
  expect(of('switchyard').cost.peakRssMb).toMatchObject({ worker: expect.any(Number), api: expect.any(Number), temporal: expect.any(Number) });
  expect(report.ratios).toEqual([expect.objectContaining({ messages: 1000, switchyardVsBare: expect.any(Number), switchyardVsRaw: expect.any(Number) })]);
}, 15 * 60_000);
