import { compareRuns, comparisonText, movement, previousRun, type RecordedRun } from '../../bench/compare';

/** A run of `systems`, each repeat's end-to-end msg/s and total CPU ms per message given. */
function run(label: string, startedAt: string, systems: Record<string, [number, number][]>, options: RecordedRun['options'] = { combined: true, server: 'dev' }, cpuModel = 'EPYC'): RecordedRun {
  return {
    label,
    startedAt,
    machine: { cpus: 2, cpuModel },
    code: { commit: label },
    options,
    results: Object.entries(systems).flatMap(([system, repeats]) => repeats.map(([throughput, cpu]) => ({ system, messages: 2000, endToEnd: { messagesPerSecond: throughput }, cost: { cpuSecondsPer1000: { total: cpu } } }))),
  };
}

describe('movement: a move only when the two runs\' ranges of repeats do not overlap', () => {
  const s = (min: number, median: number, max: number) => ({ min, median, max });
  it.each([
    ['higher, apart, higher is better', s(50, 52, 54), s(55, 57, 60), 'better', 'better'],
    ['higher, apart, higher is worse (CPU)', s(30, 31, 32), s(33, 34, 35), 'worse', 'worse'],
    ['lower, apart, higher is worse (CPU)', s(30, 31, 32), s(27, 28, 29), 'worse', 'better'],
    ['lower, apart, higher is better', s(50, 52, 54), s(40, 45, 49), 'better', 'worse'],
    ['medians apart but ranges overlap', s(40, 42, 55), s(50, 54, 60), 'better', 'within the spread'],
    ['touching ranges', s(40, 45, 50), s(50, 52, 55), 'better', 'within the spread'],
    ['the same', s(40, 45, 50), s(40, 45, 50), 'worse', 'within the spread'],
  ] as const)('%s', (_name, before, after, higherIs, expected) => {
    expect(movement(before, after, higherIs)).toBe(expected);
  });
});

describe('compareRuns', () => {
  const before = run('a', '2026-12-01T00:00:00Z', { floor: [[60, 28], [62, 27], [61, 29]], 'design-floor': [[60, 28], [61, 28], [59, 29]], switchyard: [[48, 34], [50, 35], [47, 36]], plain: [[50, 33]] });
  const after = run('b', '2026-12-02T00:00:00Z', { floor: [[60, 28], [63, 27], [61, 28]], 'design-floor': [[60, 28], [61, 28], [59, 29]], switchyard: [[58, 30], [59, 31], [60, 30]], mapped: [[40, 40]] });
  const comparison = compareRuns(before, after);

  it('names the system that moved and how, and leaves the others within their spread', () => {
    const sy = comparison.systems.find((s) => s.system === 'switchyard')!;
    expect(sy.throughput).toMatchObject({ movement: 'better', before: { median: 48 }, after: { median: 59 } });
    expect(sy.cpuMsPerMessage).toMatchObject({ movement: 'better', before: { median: 35 }, after: { median: 30 } });
    expect(sy.throughput.ratio).toBeCloseTo(59 / 48);
    const floor = comparison.systems.find((s) => s.system === 'floor')!;
    expect([floor.throughput.movement, floor.cpuMsPerMessage.movement]).toEqual(['within the spread', 'within the spread']);
    expect(comparisonText(before, after, comparison)).toContain('Moved: switchyard (throughput better, CPU better)');
  });

  it('gives the goals\' ratios to the floors before and after, medians of the repeats', () => {
    expect(comparison.floorRatios).toEqual([
      { name: 'Switchyard throughput / floor (goal ≥ 0.95)', before: 48 / 61, after: 59 / 61 },
      { name: 'Switchyard CPU per message / design floor (goal ≤ 1.10)', before: 35 / 28, after: 30 / 28 },
      { name: 'Switchyard CPU per message / floor', before: 35 / 28, after: 30 / 28 },
    ]);
  });

  it('lists the systems only one run had', () => {
    expect(comparison).toMatchObject({ onlyBefore: ['plain'], onlyAfter: ['mapped'] });
  });

  it('says when the runs differ in shape or machine', () => {
    const elsewhere = run('c', '2026-12-03T00:00:00Z', { switchyard: [[50, 35]] }, { combined: false, server: 'real', workers: 2, apis: 2 }, 'Xeon');
    const caveats = compareRuns(before, elsewhere).caveats.join('\n');
    expect(caveats).toContain('different shapes: dev server, combined, batches before, real server, 2 worker(s), 2 API(s), batches after');
    expect(caveats).toContain('different machines: 2 × EPYC before, 2 × Xeon after');
    expect(compareRuns(before, after).caveats).toEqual([]);
  });

  it('says so when nothing moved', () => {
    expect(comparisonText(before, before, compareRuns(before, before))).toContain("No system moved beyond its runs' spread.");
  });
});

describe('previousRun: the latest earlier run of the same shape sharing a system', () => {
  const latest = run('latest', '2026-12-05T00:00:00Z', { switchyard: [[50, 30]] });
  it.each([
    ['an earlier run of the shape', [run('old', '2026-12-01T00:00:00Z', { switchyard: [[50, 30]] }), run('newer', '2026-12-03T00:00:00Z', { switchyard: [[50, 30]] })], 'newer'],
    ['not a later run', [run('later', '2026-12-06T00:00:00Z', { switchyard: [[50, 30]] })], undefined],
    ['not another shape', [run('separate', '2026-12-04T00:00:00Z', { switchyard: [[50, 30]] }, { combined: false, server: 'dev' })], undefined],
    ['not a run without a shared system', [run('floors', '2026-12-04T00:00:00Z', { floor: [[50, 30]] })], undefined],
    ['not itself', [latest], undefined],
  ])('%s', (_name, recorded, expected) => {
    expect(previousRun(latest, recorded)?.label).toBe(expected);
  });
});
