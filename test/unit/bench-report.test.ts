import type { PhaseResult } from '../../bench/phase';
import { dataControlTable, encryptionTable, markdownTable, percent, rateLimitTable, ratios, runsTable, summarize, trackingPlanTable } from '../../bench/report';

const percentiles = { p50: 1, p95: 2, p99: 3, max: 4 };
function run(system: PhaseResult['system'], repeat: number, messagesPerSecond: number, cpuTotal: number, peakRssMb: Record<string, number> = { temporal: 300 }): PhaseResult {
  return {
    system,
    messages: 1000,
    repeat,
    startedAt: '2026-11-24T00:00:00.000Z',
    loadAverage: { before: [1, 1, 1], after: [1, 1, 1] },
    ingest: { messagesPerSecond: 100, ackLatencyMs: percentiles, batches: 10, retries: 0 },
    endToEnd: { messagesPerSecond, latencyMs: percentiles },
    delivered: 1000,
    duplicates: 0,
    receiverConnections: 1,
    missing: 0,
    durationSeconds: 30,
    cost: { cpuSeconds: { total: cpuTotal }, cpuSecondsPer1000: { total: cpuTotal }, peakRssMb, historyEventsPerMessage: 5, dataGrowthKbPer1000: 1 },
  };
}

it('reports Switchyard against the floor: medians of throughput and of CPU per message, over the repeats', () => {
  const results = [run('floor', 1, 30, 20), run('floor', 2, 40, 30), run('floor', 3, 20, 25), run('switchyard', 1, 33, 30), run('switchyard', 2, 10, 27), run('switchyard', 3, 45, 40)];
  const [ratio] = ratios(summarize(results));
  expect(ratio).toMatchObject({ messages: 1000, switchyardVsFloor: 1.1, cpuVsFloor: 1.2, switchyardVsBare: null });
  const table = markdownTable(summarize(results), [ratio]);
  expect(table).toContain('| 1,000 | switchyard | 33 (10–45) | – | 1.10× |');
  expect(table).toMatch(/\| 1,000 \| floor \| 30 \(20–40\) \| – \| 1\.00× \|/);
});

it('shows the largest process of a role run several times (--workers, --apis)', () => {
  const [summary] = summarize([run('switchyard', 1, 30, 30, { 'worker-1': 500, 'worker-2': 540, 'api-1': 190, 'api-2': 170, temporal: 450 })]);
  expect(summary.peakRssMb).toMatchObject({ worker: 540, api: 190, temporal: 450 });
});

it("reports payload encryption's cost: Switchyard's own worker and API CPU beside plain's, summed over several workers", () => {
  const withRoles = (system: PhaseResult['system'], repeat: number, cpu: Record<string, number>): PhaseResult => {
    const result = run(system, repeat, 30, Object.values(cpu).reduce((a, b) => a + b, 0));
    return { ...result, cost: { ...result.cost, cpuSecondsPer1000: { ...cpu, total: result.cost.cpuSecondsPer1000.total } } };
  };
  const results = [
    withRoles('floor', 1, { floorWorker: 1, floorApi: 1, temporal: 4 }),
    withRoles('switchyard', 1, { 'worker-1': 0.8, 'worker-2': 0.85, api: 1.1, temporal: 4, plainWorker: 0.01 }),
    withRoles('switchyard', 2, { 'worker-1': 0.8, 'worker-2': 0.9, api: 1.3, temporal: 4 }),
    withRoles('plain', 1, { plainWorker: 1.5, plainApi: 1, temporal: 4, worker: 0.01 }),
    withRoles('plain', 2, { plainWorker: 1.7, plainApi: 1.2, temporal: 4 }),
  ];
  const summaries = summarize(results);
  expect(summaries.find((s) => s.system === 'switchyard')!.ownCpuSecondsPer1000).toEqual({ worker: 1.675, api: 1.2 });
  expect(summaries.find((s) => s.system === 'plain')!.ownCpuSecondsPer1000).toEqual({ worker: 1.6, api: 1.1 });
  const [ratio] = ratios(summaries);
  expect(ratio.encryption).toEqual({ worker: 0.047, api: 0.091, total: expect.any(Number) });
  expect(ratio.plainCpuVsFloor).not.toBeNull();
  const table = encryptionTable(summaries, [ratio]);
  expect(table).toContain('| 1,000 | 1.68 / 1.60 | +4.7 % | 1.20 / 1.10 | +9.1 % |');
  expect(markdownTable(summaries, [ratio])).toMatch(/\| 1,000 \| plain \| 30 \| – \| 1\.00× \|/);
  expect(encryptionTable(summarize(results.filter((r) => r.system !== 'plain')), ratios(summarize(results.filter((r) => r.system !== 'plain'))))).toBe('');
  expect([percent(0.031), percent(-0.02), percent(null)]).toEqual(['+3.1 %', '-2.0 %', '–']);
});

it("reports a rate limit's cost: the limited source on Switchyard's own processes beside Switchyard", () => {
  const withRoles = (system: PhaseResult['system'], repeat: number, cpu: Record<string, number>): PhaseResult => {
    const result = run(system, repeat, 30, Object.values(cpu).reduce((a, b) => a + b, 0));
    return { ...result, cost: { ...result.cost, cpuSecondsPer1000: { ...cpu, total: result.cost.cpuSecondsPer1000.total } } };
  };
  const results = [withRoles('switchyard', 1, { worker: 5, api: 1, temporal: 10 }), withRoles('limited', 1, { worker: 5.5, api: 1, temporal: 10 })];
  const summaries = summarize(results);
  const [ratio] = ratios(summaries);
  expect(ratio.rateLimit).toEqual({ worker: 0.1, api: 0, total: 0.031 });
  expect(rateLimitTable(summaries, [ratio])).toContain('| 1,000 | 5.50 / 5.00 | +10.0 % | 1.00 / 1.00 | +0.0 % | 16.50 / 16.00 | +3.1 % |');
  expect(rateLimitTable(summarize(results.slice(0, 1)), ratios(summarize(results.slice(0, 1))))).toBe('');
});

it("reports what consent and 10 destination filters cost: the governed source on Switchyard's own processes beside Switchyard", () => {
  const withRoles = (system: PhaseResult['system'], cpu: Record<string, number>): PhaseResult => {
    const result = run(system, 1, 30, Object.values(cpu).reduce((a, b) => a + b, 0));
    return { ...result, cost: { ...result.cost, cpuSecondsPer1000: { ...cpu, total: result.cost.cpuSecondsPer1000.total } } };
  };
  const results = [withRoles('switchyard', { worker: 5, api: 2, temporal: 10 }), withRoles('governed', { worker: 5, api: 2.08, temporal: 10 })];
  const summaries = summarize(results);
  const [ratio] = ratios(summaries);
  expect(ratio.dataControl).toEqual({ worker: 0, api: 0.04, total: 0.005 });
  expect(dataControlTable(summaries, [ratio])).toContain('| 1,000 | 5.00 / 5.00 | +0.0 % | 2.08 / 2.00 | +4.0 % | 17.08 / 17.00 | +0.5 % |');
  expect(dataControlTable(summarize(results.slice(0, 1)), ratios(summarize(results.slice(0, 1))))).toBe('');
});

it("reports what a connected 50-rule tracking plan costs: the planned source on Switchyard's own processes beside Switchyard", () => {
  const withRoles = (system: PhaseResult['system'], cpu: Record<string, number>): PhaseResult => {
    const result = run(system, 1, 30, Object.values(cpu).reduce((a, b) => a + b, 0));
    return { ...result, cost: { ...result.cost, cpuSecondsPer1000: { ...cpu, total: result.cost.cpuSecondsPer1000.total } } };
  };
  const results = [withRoles('switchyard', { worker: 5, api: 2, temporal: 10 }), withRoles('planned', { worker: 5, api: 2.02, temporal: 10 })];
  const summaries = summarize(results);
  const [ratio] = ratios(summaries);
  expect(ratio.trackingPlan).toEqual({ worker: 0, api: 0.01, total: 0.001 });
  expect(trackingPlanTable(summaries, [ratio])).toContain('| 1,000 | 5.00 / 5.00 | +0.0 % | 2.02 / 2.00 | +1.0 % | 17.02 / 17.00 | +0.1 % |');
  expect(trackingPlanTable(summarize(results.slice(0, 1)), ratios(summarize(results.slice(0, 1))))).toBe('');
});

it('lists every run in order with CPU per message by component: the growth windows of one long run', () => {
  const window = (repeat: number, temporal: number): PhaseResult => {
    const result = run('switchyard', repeat, 60, 0);
    const cpu = { temporal, postgres: 7, 'worker-1': 5, 'worker-2': 6, 'api-1': 1, 'api-2': 1.5 };
    return { ...result, startedAt: `2026-11-27T14:0${repeat}:00.000Z`, cost: { ...result.cost, cpuSecondsPer1000: { ...cpu, total: Object.values(cpu).reduce((a, b) => a + b, 0) } } };
  };
  const lines = runsTable([window(1, 10), window(2, 12.5)]).split('\n');
  expect(lines).toHaveLength(4);
  expect(lines[2]).toBe('| 1 | switchyard | 1,000 | 14:01:00 | 60 | 30.5 | 10.0 | 7.0 | 11.0 | 2.5 | 1 |');
  expect(lines[3]).toBe('| 2 | switchyard | 1,000 | 14:02:00 | 60 | 33.0 | 12.5 | 7.0 | 11.0 | 2.5 | 1 |');
});
