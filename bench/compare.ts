import { spread, type Spread } from './stats';

/**
 * Which system moved between two bench runs. A run's repeats spread (a quiet 2-core box spreads
 * one system's CPU per message by 10–30 % from repeat to repeat), so a change counts as a move only
 * when the two runs' ranges of repeats do not overlap: every repeat of the new run beyond every
 * repeat of the old one. Inside the spread it is "within the spread", however different the medians.
 * Against-the-floor ratios are compared as well: they are the figures the goals are stated in, and
 * they hold across machines, where absolute figures do not.
 */

/** The part of a results file (bench/report.ts) a comparison reads. */
export interface RecordedRun {
  label: string;
  startedAt: string;
  command?: string;
  machine?: { cpuModel?: string; cpus?: number };
  code?: { commit?: string };
  options: { combined?: boolean; server?: string; workers?: number; apis?: number; single?: boolean | number; messages?: number[] };
  results: { system: string; messages: number; endToEnd: { messagesPerSecond: number }; cost: { cpuSecondsPer1000: Record<string, number> } }[];
}

export type Movement = 'better' | 'worse' | 'within the spread';

export interface MetricChange {
  before: Spread;
  after: Spread;
  /** after.median / before.median. */
  ratio: number;
  movement: Movement;
}

export interface SystemChange {
  system: string;
  messages: number;
  throughput: MetricChange;
  cpuMsPerMessage: MetricChange;
}

export interface Comparison {
  systems: SystemChange[];
  /** Systems only one of the runs had. */
  onlyBefore: string[];
  onlyAfter: string[];
  /** Against the empty floor (throughput) and the design floor (CPU), medians, where both runs had the systems. */
  floorRatios: { name: string; before: number; after: number }[];
  /** Why the two runs may not be comparable: different shape, machine. */
  caveats: string[];
}

const key = (system: string, messages: number) => `${system}@${messages}`;

function spreadsBySystem(run: RecordedRun, pick: (r: RecordedRun['results'][number]) => number): Map<string, Spread> {
  const values = new Map<string, number[]>();
  for (const result of run.results) {
    const k = key(result.system, result.messages);
    values.set(k, [...(values.get(k) ?? []), pick(result)]);
  }
  return new Map([...values].map(([k, v]) => [k, spread(v)]));
}

/** Whether `after` moved from `before`, where higher is better or worse. */
export function movement(before: Spread, after: Spread, higherIs: 'better' | 'worse'): Movement {
  const up = after.min > before.max;
  const down = after.max < before.min;
  if (!up && !down) return 'within the spread';
  return up === (higherIs === 'better') ? 'better' : 'worse';
}

function change(before: Spread, after: Spread, higherIs: 'better' | 'worse'): MetricChange {
  return { before, after, ratio: after.median / before.median, movement: movement(before, after, higherIs) };
}

/** The shape a run was measured in: runs of different shapes are not the same question. */
export function shapeOf(run: RecordedRun): string {
  const o = run.options;
  const processes = o.combined ? 'combined' : `${o.workers ?? 1} worker(s), ${o.apis ?? 1} API(s)`;
  return `${o.server ?? 'dev'} server, ${processes}, ${o.single ? 'single calls' : 'batches'}`;
}

const median = (values: number[]) => spread(values).median;

function floorRatios(run: RecordedRun): Map<string, number> {
  const of = (system: string, pick: (r: RecordedRun['results'][number]) => number) => {
    const values = run.results.filter((r) => r.system === system).map(pick);
    return values.length ? median(values) : undefined;
  };
  const throughput = (r: RecordedRun['results'][number]) => r.endToEnd.messagesPerSecond;
  const cpu = (r: RecordedRun['results'][number]) => r.cost.cpuSecondsPer1000.total;
  const out = new Map<string, number>();
  const sy = { t: of('switchyard', throughput), c: of('switchyard', cpu) };
  const floor = { t: of('floor', throughput), c: of('floor', cpu) };
  const design = { t: of('design-floor', throughput), c: of('design-floor', cpu) };
  if (sy.t !== undefined && floor.t !== undefined) out.set('Switchyard throughput / floor (goal ≥ 0.95)', sy.t / floor.t);
  if (sy.c !== undefined && design.c !== undefined) out.set('Switchyard CPU per message / design floor (goal ≤ 1.10)', sy.c / design.c);
  if (sy.c !== undefined && floor.c !== undefined) out.set('Switchyard CPU per message / floor', sy.c / floor.c);
  return out;
}

export function compareRuns(before: RecordedRun, after: RecordedRun): Comparison {
  const tBefore = spreadsBySystem(before, (r) => r.endToEnd.messagesPerSecond);
  const tAfter = spreadsBySystem(after, (r) => r.endToEnd.messagesPerSecond);
  // CPU seconds per 1,000 messages is CPU milliseconds per message.
  const cBefore = spreadsBySystem(before, (r) => r.cost.cpuSecondsPer1000.total);
  const cAfter = spreadsBySystem(after, (r) => r.cost.cpuSecondsPer1000.total);
  const systems: SystemChange[] = [];
  for (const [k, afterThroughput] of tAfter) {
    const beforeThroughput = tBefore.get(k);
    if (!beforeThroughput) continue;
    const [system, messages] = k.split('@');
    systems.push({ system, messages: Number(messages), throughput: change(beforeThroughput, afterThroughput, 'better'), cpuMsPerMessage: change(cBefore.get(k)!, cAfter.get(k)!, 'worse') });
  }
  const names = (m: Map<string, Spread>) => new Set([...m.keys()].map((k) => k.split('@')[0]));
  const [namesBefore, namesAfter] = [names(tBefore), names(tAfter)];
  const rBefore = floorRatios(before);
  const rAfter = floorRatios(after);
  const caveats: string[] = [];
  if (shapeOf(before) !== shapeOf(after)) caveats.push(`different shapes: ${shapeOf(before)} before, ${shapeOf(after)} after`);
  const machine = (run: RecordedRun) => `${run.machine?.cpus ?? '?'} × ${run.machine?.cpuModel ?? 'unknown CPU'}`;
  if (machine(before) !== machine(after)) caveats.push(`different machines: ${machine(before)} before, ${machine(after)} after; compare the ratios to the floors, not the absolute figures`);
  return {
    systems,
    onlyBefore: [...namesBefore].filter((n) => !namesAfter.has(n)),
    onlyAfter: [...namesAfter].filter((n) => !namesBefore.has(n)),
    floorRatios: [...rAfter].filter(([name]) => rBefore.has(name)).map(([name, value]) => ({ name, before: rBefore.get(name)!, after: value })),
    caveats,
  };
}

/**
 * The recorded run a new one is compared with: the latest earlier run of the same shape that
 * shares a system with it.
 */
export function previousRun(run: RecordedRun, recorded: RecordedRun[]): RecordedRun | undefined {
  const systems = new Set(run.results.map((r) => r.system));
  return recorded
    .filter((r) => r.startedAt < run.startedAt && shapeOf(r) === shapeOf(run) && r.results.some((x) => systems.has(x.system)))
    .sort((a, b) => (a.startedAt < b.startedAt ? 1 : -1))[0];
}

const fmt = (s: Spread, digits: number) => `${s.median.toFixed(digits)} (${s.min.toFixed(digits)}–${s.max.toFixed(digits)})`;

export function comparisonText(before: RecordedRun, after: RecordedRun, comparison: Comparison): string {
  const lines = [
    `Before: ${before.label} (${before.startedAt}, commit ${before.code?.commit ?? '?'})`,
    `After:  ${after.label} (${after.startedAt}, commit ${after.code?.commit ?? '?'})`,
    ...comparison.caveats.map((c) => `Caveat: ${c}`),
    '',
    '| system | N | msg/s before | msg/s after | × | throughput | CPU ms/msg before | CPU ms/msg after | × | CPU |',
    '|---|---:|---:|---:|---:|---|---:|---:|---:|---|',
    ...comparison.systems.map((s) => `| ${s.system} | ${s.messages} | ${fmt(s.throughput.before, 1)} | ${fmt(s.throughput.after, 1)} | ${s.throughput.ratio.toFixed(2)} | ${s.throughput.movement} | ${fmt(s.cpuMsPerMessage.before, 1)} | ${fmt(s.cpuMsPerMessage.after, 1)} | ${s.cpuMsPerMessage.ratio.toFixed(2)} | ${s.cpuMsPerMessage.movement} |`),
  ];
  if (comparison.floorRatios.length) lines.push('', ...comparison.floorRatios.map((r) => `${r.name}: ${r.before.toFixed(2)} → ${r.after.toFixed(2)}`));
  if (comparison.onlyBefore.length) lines.push(`Only before: ${comparison.onlyBefore.join(', ')}`);
  if (comparison.onlyAfter.length) lines.push(`Only after: ${comparison.onlyAfter.join(', ')}`);
  const moved = comparison.systems.filter((s) => s.throughput.movement !== 'within the spread' || s.cpuMsPerMessage.movement !== 'within the spread');
  lines.push('', moved.length ? `Moved: ${moved.map((s) => `${s.system} (throughput ${s.throughput.movement}, CPU ${s.cpuMsPerMessage.movement})`).join('; ')}` : 'No system moved beyond its runs\' spread.');
  return lines.join('\n');
}
