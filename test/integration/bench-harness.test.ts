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
 * A benchmark is not a timed test: nothing here asserts a speed. Issue 41: each scenario runs the
 * fewest messages that still exercise every step of the harness (200 of --quick's 1,000, 40 single
 * calls, a 30-message replay); the figures in docs/performance.md come from full runs.
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

/**
 * The bench as `npm run bench -- args` runs it; it starts its own system, so the test run's Temporal
 * address, store and queue must not leak into it. The run's workflow bundle (the same code) does:
 * each of the bench's worker processes would otherwise bundle the workflows with webpack again.
 */
function bench(args: string[]) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => key === 'WORKFLOW_BUNDLE' || !Object.values(SETTINGS).some((s) => s.env === key)));
  return run(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/run.ts'), ...args], { cwd: ROOT, env, maxBuffer: 16 * 1024 * 1024, timeout: 14 * 60_000 });
}

it('runs the quick bench: raw ceiling, bare Temporal, both floors and Switchyard, every message delivered', async () => {
  const { stdout } = await bench(['--quick', '-n', '200', '--warmup', '20', '--out-dir', outDir]);
  const files = readdirSync(outDir);
  const json = files.find((f) => f.endsWith('.json'));
  expect(json).toBeDefined();
  expect(files).toContain(json!.replace(/\.json$/, '.svg'));
  expect(readFileSync(path.join(outDir, json!.replace(/\.json$/, '.svg')), 'utf8')).toMatch(/^<svg[^>]*>[\s\S]*End-to-end throughput[\s\S]*<\/svg>\s*$/);
  expect(stdout).toContain('| N | system | end-to-end msg/s | vs bare | vs floor | vs design floor | vs raw |');

  const report = JSON.parse(readFileSync(path.join(outDir, json!), 'utf8'));
  expect(report).toMatchObject({ schema: 1, options: { messages: [200], systems: ['raw', 'bare', 'floor', 'design-floor', 'switchyard'] } });
  expect(report.machine.uptimeBefore).toMatch(/load average/);
  const results = report.results as Result[];
  expect(results.map((r) => r.system).sort()).toEqual(['bare', 'design-floor', 'floor', 'raw', 'switchyard']);
  for (const r of results) {
    expect(r).toMatchObject({ messages: 200, delivered: 200, missing: 0 });
    for (const value of [r.ingest.messagesPerSecond, r.endToEnd.messagesPerSecond, r.endToEnd.latencyMs.p50, r.endToEnd.latencyMs.p99, r.ingest.ackLatencyMs.p99, r.cost.cpuSecondsPer1000.total]) {
      expect(value).toBeGreaterThan(0);
    }
  }
  const of = (system: string) => results.find((r) => r.system === system)!;
  expect(of('raw').cost.historyEventsPerMessage).toBeNull();
  expect(of('bare').cost.historyEventsPerMessage).toBeGreaterThan(0);
  expect(of('switchyard').cost.historyEventsPerMessage).toBeGreaterThan(0);
  // The floor completes in its first workflow task: started, task scheduled, started, completed, workflow completed.
  expect(of('floor').cost.historyEventsPerMessage).toBe(5);
  expect(of('floor').cost.peakRssMb).toMatchObject({ floorWorker: expect.any(Number), floorApi: expect.any(Number) });
  // The design floor's local activity leaves one marker more (6 events), and on a busy box sometimes a
  // workflow task more, when the activity outlasts the task's heartbeat; as Switchyard's first attempt does.
  expect(of('design-floor').cost.historyEventsPerMessage).toBeGreaterThanOrEqual(6);
  expect(of('design-floor').cost.historyEventsPerMessage).toBeLessThan(9);
  expect(of('design-floor').cost.peakRssMb).toMatchObject({ designFloorWorker: expect.any(Number), designFloorApi: expect.any(Number) });
  expect(of('switchyard').cost.dataGrowthKbPer1000).toBeGreaterThan(0);
  expect(of('switchyard').cost.peakRssMb).toMatchObject({ worker: expect.any(Number), api: expect.any(Number), temporal: expect.any(Number) });
  const [ratio] = report.ratios as Record<string, number>[];
  expect(ratio).toMatchObject({ messages: 200, switchyardVsBare: expect.any(Number), switchyardVsRaw: expect.any(Number), switchyardVsFloor: expect.any(Number), cpuVsFloor: expect.any(Number) });
  // The ratios are the medians' quotients, not numbers of their own.
  const total = (system: string) => of(system).cost.cpuSecondsPer1000.total;
  expect(ratio.cpuVsFloor).toBeCloseTo(total('switchyard') / total('floor'), 1);
  expect(ratio.switchyardVsFloor).toBeCloseTo(of('switchyard').endToEnd.messagesPerSecond / of('floor').endToEnd.messagesPerSecond, 1);
  expect(stdout).toMatch(/Switchyard = [\d.]+× the empty workflow's throughput at [\d.]+× its CPU per message/);
  const vsDesign = (ratio as unknown as { switchyardVsDesignFloor: Record<string, number> }).switchyardVsDesignFloor;
  expect(vsDesign).toEqual({ throughput: expect.any(Number), cpu: expect.any(Number), ownCpu: expect.any(Number) });
  expect(vsDesign.cpu).toBeCloseTo(total('switchyard') / total('design-floor'), 1);
  expect(stdout).toMatch(/Switchyard = [\d.]+× the design floor's throughput at [\d.]+× its CPU per message, its own processes [\d.]+×/);
}, 15 * 60_000);

// The server deletes a closed run once its persisted ack level passes the run's close task, written every 30 s by default.
const ACK_EVERY_SECOND = ['history.transferProcessorUpdateAckInterval', 'history.visibilityProcessorUpdateAckInterval'].map((key) => `--dynamic-config-value ${key}="1s"`).join(' ');

it('runs single calls: one message per POST /v1/track, on schedule, each acknowledged and delivered; with and without payload encryption, the archive and a rate limit side by side, then deleted as retention deletes them', async () => {
  const dir = path.join(outDir, 'single');
  const { stdout } = await bench(['--single', '25', '-n', '40', '--warmup', '5', '--systems', 'floor,switchyard,plain,unarchived,limited,mapped', '--retention', '--temporal-flags', ACK_EVERY_SECOND, '--label', 'single', '--out-dir', dir]);
  const report = JSON.parse(readFileSync(path.join(dir, readdirSync(dir).find((f) => f.endsWith('.json'))!), 'utf8'));
  expect(report.options).toMatchObject({ single: true, rate: 25, systems: ['floor', 'switchyard', 'plain', 'unarchived', 'limited', 'mapped'] });
  // Each Switchyard metered on its own processes, so the encryption's cost is a difference of like with like.
  for (const system of ['switchyard', 'plain', 'unarchived', 'limited', 'mapped']) {
    const summary = report.summaries.find((s: { system: string }) => s.system === system);
    expect(summary.ownCpuSecondsPer1000).toEqual({ worker: expect.any(Number), api: expect.any(Number) });
    expect(summary.ownCpuSecondsPer1000.worker).toBeGreaterThan(0);
  }
  expect(report.ratios[0].encryption).toEqual({ worker: expect.any(Number), api: expect.any(Number), total: expect.any(Number) });
  expect(stdout).toMatch(/payload encryption costs the worker [+-][\d.]+ % CPU per message/);
  expect(report.ratios[0].rateLimit).toEqual({ worker: expect.any(Number), api: expect.any(Number), total: expect.any(Number) });
  expect(stdout).toMatch(/a rate limit costs the worker [+-][\d.]+ % CPU per message/);
  expect(report.ratios[0].archive).toEqual({ worker: expect.any(Number), api: expect.any(Number), total: expect.any(Number) });
  expect(report.ratios[0].actions).toEqual({ worker: expect.any(Number), api: expect.any(Number), total: expect.any(Number), workerPerRequest: expect.any(Number) });
  expect(stdout).toMatch(/an Actions destination with two mappings costs the worker [+-][\d.]+ % CPU per message, [\d.]+× a classic destination's per request/);
  expect(stdout).toMatch(/the archive costs the API [+-][\d.]+ % CPU per message, the whole system [+-][\d.]+ %/);
  expect(stdout).toContain('Every run in order:');
  // --retention: every closed delivery of the run (warm-ups, switchyard, limited and mapped) deleted and gone from visibility, its cost metered.
  expect(report.retention).toMatchObject({ workflows: 3 * (5 + 40) });
  expect(report.retention.cpuMsPerWorkflow.temporal).toBeGreaterThan(0);
  expect(stdout).toMatch(/Retention's cost .*: 135 workflows in [\d.]+ s; CPU ms per workflow: Temporal [\d.]+/);
  for (const r of report.results as (Result & { ingest: { batches: number }; offeredRate: number })[]) {
    // A request per message: as many acknowledgements as messages.
    expect(r).toMatchObject({ messages: 40, delivered: 40, missing: 0, offeredRate: 25, ingest: { batches: 40 } });
    expect(r.ingest.ackLatencyMs.p50).toBeGreaterThan(0);
  }
}, 15 * 60_000);

it('runs the replay scenario: an archive replayed to a new destination beside live single calls, each replayed message received once, window by window', async () => {
  const dir = path.join(outDir, 'replay');
  const { stdout } = await bench(['--replay', '30', '-n', '30', '--warmup', '5', '--label', 'replay', '--out-dir', dir]);
  const report = JSON.parse(readFileSync(path.join(dir, readdirSync(dir).find((f) => f.endsWith('.json'))!), 'utf8'));
  expect(report.replay).toMatchObject({ archived: 30, replay: { status: 'completed', matched: 30, started: 30, delivered: 30, failed: 0, received: 30, duplicates: 0 } });
  expect(report.replay.before).toHaveLength(1);
  expect(report.replay.after).toHaveLength(1);
  expect(report.replay.beside.length).toBeGreaterThan(0);
  expect(report.replay.p99).toEqual({ without: expect.objectContaining({ median: expect.any(Number) }), beside: expect.objectContaining({ median: expect.any(Number) }), ratio: expect.any(Number) });
  expect(report.replay.replay.messagesPerSecond).toBeGreaterThan(0);
  for (const r of report.results as Result[]) expect(r).toMatchObject({ messages: 30, delivered: 30, missing: 0 });
  expect(stdout).toMatch(/Live p99 beside the replay: median \d+ ms .* \*\*[\d.]+×\*\*/);
  expect(stdout).toMatch(/30 delivered, 0 failed, 30 received \(0 twice\)/);
}, 15 * 60_000);
