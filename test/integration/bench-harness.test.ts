import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { SETTINGS } from '../../src/config';
import { ROOT } from '../helpers/processes';

/**
 * `npm run bench` works end to end: its own Temporal dev server, workers, APIs and receiver, every
 * system delivering every message, and the result file has the documented shape. A benchmark is not
 * a timed test: nothing here asserts a speed; the figures in docs/performance.md come from full runs.
 * What is proved is the harness's code paths, not the volume, so two runs prove them all
 * (each bench run starts a dev server and a tsx process per worker and API, most of this file's CPU):
 * one run of every system a ratio needs, as single calls (POST /v1/track on schedule) after a warm-up
 * that sends each system's messages as concurrent batches (/v1/batch, the default mode), then
 * retention's deletes; and the replay scenario at its smallest.
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
function bench(args: string[], settings: Record<string, string> = {}) {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([key]) => key === 'WORKFLOW_BUNDLE' || !Object.values(SETTINGS).some((s) => s.env === key)));
  const env = { ...inherited, ...settings };
  return run(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/run.ts'), ...args], { cwd: ROOT, env, maxBuffer: 16 * 1024 * 1024, timeout: 14 * 60_000 });
}

// The server deletes a closed run once its persisted ack level passes the run's close task, written every 30 s by default.
const ACK_EVERY_SECOND = ['history.transferProcessorUpdateAckInterval', 'history.visibilityProcessorUpdateAckInterval'].map((key) => `--dynamic-config-value ${key}="1s"`).join(' ');

/** Every system a documented ratio needs: the references, both floors, Switchyard and its feature systems. */
const SYSTEMS = ['raw', 'bare', 'floor', 'design-floor', 'switchyard', 'plain', 'unarchived', 'limited', 'mapped'];
const WARMUP = 4;
const MESSAGES = 20;

describe('one run of every system a documented ratio needs', () => {
  /** The one run of every system: warm-ups as two concurrent batches of 2, then 20 single calls at 25/s each, then retention. */
  let systems: { stdout: string; stderr: string; report: Record<string, unknown> & { results: (Result & { ingest: { batches: number }; offeredRate: number })[] } };
  beforeAll(async () => {
    const dir = path.join(outDir, 'systems');
    const { stdout, stderr } = await bench(['--single', '25', '-n', String(MESSAGES), '--warmup', String(WARMUP), '-b', '2', '--systems', SYSTEMS.join(','), '--retention', '--temporal-flags', ACK_EVERY_SECOND, '--label', 'systems', '--out-dir', dir]);
    const files = readdirSync(dir);
    const json = files.find((f) => f.endsWith('.json'));
    expect(json).toBeDefined();
    expect(files).toContain(json!.replace(/\.json$/, '.svg'));
    expect(readFileSync(path.join(dir, json!.replace(/\.json$/, '.svg')), 'utf8')).toMatch(/^<svg[^>]*>[\s\S]*End-to-end throughput[\s\S]*<\/svg>\s*$/);
    systems = { stdout, stderr, report: JSON.parse(readFileSync(path.join(dir, json!), 'utf8')) };
  }, 15 * 60_000);

  it('runs every system: raw ceiling, bare Temporal, both floors and Switchyard, every message delivered, warm-ups as concurrent batches, ratios from the runs', () => {
    const { stdout, stderr, report } = systems;
    expect(stdout).toContain('| N | system | end-to-end msg/s | vs bare | vs floor | vs design floor | vs raw |');
    expect(report).toMatchObject({ schema: 1, options: { messages: [MESSAGES], systems: SYSTEMS, warmup: WARMUP, batchSize: 2 } });
    expect((report.machine as { uptimeBefore: string }).uptimeBefore).toMatch(/load average/);
    // The warm-ups are the default mode's path (/v1/batch for Switchyard and the floors, concurrent lanes, unpaced): each delivered in full.
    for (const system of SYSTEMS) expect(stderr).toMatch(new RegExp(`warm-up ${system} n=${WARMUP}\\s+${WARMUP}/${WARMUP} delivered in`));
    const results = report.results;
    expect(results.map((r) => r.system).sort()).toEqual([...SYSTEMS].sort());
    for (const r of results) {
      expect(r).toMatchObject({ messages: MESSAGES, delivered: MESSAGES, missing: 0 });
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
    expect(ratio).toMatchObject({ messages: MESSAGES, switchyardVsBare: expect.any(Number), switchyardVsRaw: expect.any(Number), switchyardVsFloor: expect.any(Number), cpuVsFloor: expect.any(Number) });
    // The ratios are the medians' quotients, not numbers of their own.
    const total = (system: string) => of(system).cost.cpuSecondsPer1000.total;
    expect(ratio.cpuVsFloor).toBeCloseTo(total('switchyard') / total('floor'), 1);
    expect(ratio.switchyardVsFloor).toBeCloseTo(of('switchyard').endToEnd.messagesPerSecond / of('floor').endToEnd.messagesPerSecond, 1);
    expect(stdout).toMatch(/Switchyard = [\d.]+× the empty workflow's throughput at [\d.]+× its CPU per message/);
    const vsDesign = (ratio as unknown as { switchyardVsDesignFloor: Record<string, number> }).switchyardVsDesignFloor;
    expect(vsDesign).toEqual({ throughput: expect.any(Number), cpu: expect.any(Number), ownCpu: expect.any(Number) });
    expect(vsDesign.cpu).toBeCloseTo(total('switchyard') / total('design-floor'), 1);
    expect(stdout).toMatch(/Switchyard = [\d.]+× the design floor's throughput at [\d.]+× its CPU per message, its own processes [\d.]+×/);
  });

  it('runs single calls: one message per POST /v1/track, on schedule, each acknowledged and delivered; with and without payload encryption, the archive and a rate limit side by side, then deleted as retention deletes them', () => {
    const { stdout, report } = systems as unknown as { stdout: string; report: { options: unknown; summaries: { system: string; ownCpuSecondsPer1000: Record<string, number> }[]; ratios: Record<string, unknown>[]; retention: { workflows: number; cpuMsPerWorkflow: { temporal: number } }; results: (Result & { ingest: { batches: number }; offeredRate: number })[] } };
    expect(report.options).toMatchObject({ single: true, rate: 25, systems: SYSTEMS });
    // Each Switchyard metered on its own processes, so the encryption's cost is a difference of like with like.
    for (const system of ['switchyard', 'plain', 'unarchived', 'limited', 'mapped']) {
      const summary = report.summaries.find((s) => s.system === system)!;
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
    // --retention: every closed delivery on Switchyard's queue (warm-ups and runs of switchyard, limited and mapped) deleted and gone from visibility, its cost metered.
    const deliveries = 3 * (WARMUP + MESSAGES);
    expect(report.retention).toMatchObject({ workflows: deliveries });
    expect(report.retention.cpuMsPerWorkflow.temporal).toBeGreaterThan(0);
    expect(stdout).toMatch(new RegExp(`Retention's cost .*: ${deliveries} workflows in [\\d.]+ s; CPU ms per workflow: Temporal [\\d.]+`));
    for (const r of report.results) {
      // A request per message: as many acknowledgements as messages.
      expect(r).toMatchObject({ messages: MESSAGES, delivered: MESSAGES, missing: 0, offeredRate: 25, ingest: { batches: MESSAGES } });
      expect(r.ingest.ackLatencyMs.p50).toBeGreaterThan(0);
    }
  });
});

it('runs the replay scenario: an archive replayed to a new destination beside live single calls, each replayed message received once, window by window', async () => {
  const dir = path.join(outDir, 'replay');
  // A fixed live-lag ceiling (as test/integration/replay-live-first.test.ts sets a 1 ms one): the
  // replay starts at once instead of first resting 10 s to measure an unhurried baseline, during
  // which live windows would run for nothing; the pacing itself is replay-live-first's subject.
  // Switchyard alone: the scenario measures nothing else, so no other system is warmed up (nor the design floor started).
  const { stdout } = await bench(['--replay', '10', '-n', '10', '--warmup', '2', '--systems', 'switchyard', '--label', 'replay', '--out-dir', dir], { REPLAY_LIVE_LAG_LIMIT: '10s' });
  const report = JSON.parse(readFileSync(path.join(dir, readdirSync(dir).find((f) => f.endsWith('.json'))!), 'utf8'));
  expect(report.replay).toMatchObject({ archived: 10, replay: { status: 'completed', matched: 10, started: 10, delivered: 10, failed: 0, received: 10, duplicates: 0 } });
  expect(report.replay.before).toHaveLength(1);
  expect(report.replay.after).toHaveLength(1);
  expect(report.replay.beside.length).toBeGreaterThan(0);
  expect(report.replay.p99).toEqual({ without: expect.objectContaining({ median: expect.any(Number) }), beside: expect.objectContaining({ median: expect.any(Number) }), ratio: expect.any(Number) });
  expect(report.replay.replay.messagesPerSecond).toBeGreaterThan(0);
  for (const r of report.results as Result[]) expect(r).toMatchObject({ messages: 10, delivered: 10, missing: 0 });
  expect(stdout).toMatch(/Live p99 beside the replay: median \d+ ms .* \*\*[\d.]+×\*\*/);
  expect(stdout).toMatch(/10 delivered, 0 failed, 10 received \(0 twice\)/);
}, 15 * 60_000);
