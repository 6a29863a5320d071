import type { PhaseResult } from '../../bench/phase';
import { markdownTable, ratios, summarize } from '../../bench/report';

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
