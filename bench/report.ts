import type { PhaseResult } from './phase';
import { SYSTEM_TITLES, SYSTEMS, type SystemName } from './systems';
import { STAGES, type Stage } from './stages';
import { round, spread, type Spread } from './stats';

/** One (N, system) cell over its repeats. */
export interface Summary {
  system: SystemName;
  messages: number;
  repeats: number;
  endToEndMessagesPerSecond: Spread;
  ingestMessagesPerSecond: Spread;
  ackLatencyMs: { p50: number; p95: number; p99: number };
  endToEndLatencyMs: { p50: number; p95: number; p99: number; p99Spread: Spread };
  cpuSecondsPer1000: number;
  /** The system's own worker and API processes (several summed; --combined: all in `worker`), per 1,000 messages. */
  ownCpuSecondsPer1000: { worker?: number; api?: number };
  peakRssMb: { worker?: number; api?: number; bareWorker?: number; floorWorker?: number; floorApi?: number; temporal: number };
  historyEventsPerMessage: number | null;
  dataGrowthKbPer1000: number | null;
  delivered: number;
  sent: number;
  duplicates: number;
}

export interface Ratio {
  messages: number;
  /** Switchyard end-to-end throughput (median) over bare Temporal's / the raw ceiling's. */
  switchyardVsBare: number | null;
  switchyardVsRaw: number | null;
  bareVsRaw: number | null;
  /** p99 end-to-end latency, Switchyard over bare Temporal. */
  p99VsBare: number | null;
  /**
   * Switchyard against the empty workflow started like a delivery (the goal: throughput at
   * least 0.95×, CPU per message at most 1.1×): end-to-end throughput and CPU per message, medians.
   */
  switchyardVsFloor: number | null;
  cpuVsFloor: number | null;
  /**
   * Switchyard against the design floor (the same workflow calling one no-op local
   * activity), when it ran: end-to-end throughput, CPU per message of every process, and of the
   * system's own processes (workers and APIs; the goal: at most 1.1×), medians.
   */
  switchyardVsDesignFloor: { throughput: number | null; cpu: number | null; ownCpu: number | null } | null;
  /** The same two for Switchyard without payload encryption, when it ran. */
  plainVsFloor: number | null;
  plainCpuVsFloor: number | null;
  /** What payload encryption adds to CPU per message (0.03 = 3 % more), Switchyard over `plain`, when both ran. */
  encryption: { worker: number | null; api: number | null; total: number | null } | null;
  /** What a rate limit that never binds adds to CPU per message, `limited` over Switchyard, when both ran. */
  rateLimit: { worker: number | null; api: number | null; total: number | null } | null;
  /** What consent and 10 destination filters add to CPU per message, `governed` over Switchyard, when both ran. */
  dataControl: { worker: number | null; api: number | null; total: number | null } | null;
  /** What the archive adds to CPU per message, Switchyard over `unarchived` (ARCHIVE_RETENTION=0), when both ran. */
  archive: { worker: number | null; api: number | null; total: number | null } | null;
  /**
   * An Actions destination with two mappings against a classic destination, `mapped` over Switchyard,
   * when both ran: what it adds per message, and the worker's CPU per request (two requests per
   * message against one) over the classic destination's.
   */
  actions: { worker: number | null; api: number | null; total: number | null; workerPerRequest: number | null } | null;
  /** What a connected 50-rule tracking plan adds to CPU per message, `planned` over Switchyard, when both ran (the API's at most 5 %). */
  trackingPlan: { worker: number | null; api: number | null; total: number | null } | null;
  /** What an insert function on a webhook destination adds to CPU per message, `inserted` over Switchyard, when both ran. */
  insertFunction: { worker: number | null; api: number | null; total: number | null } | null;
  /** A destination function whose fetch delivers against a classic webhook, `scripted` over Switchyard, when both ran. */
  destinationFunction: { worker: number | null; api: number | null; total: number | null } | null;
}

/** Metered process names of each system's own worker and API (bench/system.ts names them). */
export const OWN_ROLES: Record<SystemName, { worker?: string; api?: string }> = {
  raw: {},
  bare: { worker: 'bareWorker' },
  floor: { worker: 'floorWorker', api: 'floorApi' },
  'design-floor': { worker: 'designFloorWorker', api: 'designFloorApi' },
  switchyard: { worker: 'worker', api: 'api' },
  plain: { worker: 'plainWorker', api: 'plainApi' },
  unarchived: { worker: 'unarchivedWorker', api: 'unarchivedApi' },
  limited: { worker: 'worker', api: 'api' },
  governed: { worker: 'worker', api: 'api' },
  mapped: { worker: 'worker', api: 'api' },
  inserted: { worker: 'worker', api: 'api' },
  scripted: { worker: 'worker', api: 'api' },
  planned: { worker: 'worker', api: 'api' },
};
/** A role's CPU per 1,000 messages in one run: `worker`, or `worker-1` + `worker-2` … with --workers. */
function roleCpu(result: PhaseResult, role: string): number | undefined {
  const values = Object.entries(result.cost.cpuSecondsPer1000).filter(([name]) => name === role || name.startsWith(`${role}-`)).map(([, seconds]) => seconds);
  return values.length === 0 ? undefined : values.reduce((a, b) => a + b, 0);
}

const median = (values: number[]) => spread(values).median;
/** Systems that are Switchyard's own API and worker (in some configuration). */
const isSwitchyard = (system: SystemName) => system === 'switchyard' || system === 'plain' || system === 'unarchived' || system === 'limited' || system === 'governed' || system === 'mapped' || system === 'planned' || system === 'inserted' || system === 'scripted';
const isFloor = (system: SystemName) => system === 'floor' || system === 'design-floor';
/** A system's own worker and API processes together (--combined: the API is in the worker), per 1,000 messages. */
const ownCpu = (s: Summary) => (s.ownCpuSecondsPer1000.worker === undefined ? undefined : s.ownCpuSecondsPer1000.worker + (s.ownCpuSecondsPer1000.api ?? 0));

/** What `on` adds to `off`'s CPU per message: its own worker, its own API and every process (0.03 = 3 % more). */
function addedCost(on: Summary, off: Summary): { worker: number | null; api: number | null; total: number | null } {
  const added = (a?: number, b?: number) => (a !== undefined && b ? round(a / b - 1, 3) : null);
  return { worker: added(on.ownCpuSecondsPer1000.worker, off.ownCpuSecondsPer1000.worker), api: added(on.ownCpuSecondsPer1000.api, off.ownCpuSecondsPer1000.api), total: added(on.cpuSecondsPer1000, off.cpuSecondsPer1000) };
}

export function summarize(results: PhaseResult[]): Summary[] {
  const cells = new Map<string, PhaseResult[]>();
  for (const result of results) {
    const key = `${result.messages}:${result.system}`;
    cells.set(key, [...(cells.get(key) ?? []), result]);
  }
  return [...cells.values()]
    .map((runs) => {
      const { system, messages } = runs[0];
      // A role run as several processes (worker-1, worker-2… with --workers) shows its largest one.
      const rss = (role: string) => {
        const values = runs.flatMap((r) => Object.entries(r.cost.peakRssMb).filter(([name]) => name === role || name.startsWith(`${role}-`)).map(([, mb]) => mb));
        return values.length === 0 ? undefined : Math.max(...values);
      };
      const events = runs.map((r) => r.cost.historyEventsPerMessage).filter((v): v is number => v !== null);
      const growth = runs.map((r) => r.cost.dataGrowthKbPer1000).filter((v): v is number => v !== null);
      return {
        system,
        messages,
        repeats: runs.length,
        endToEndMessagesPerSecond: spread(runs.map((r) => r.endToEnd.messagesPerSecond)),
        ingestMessagesPerSecond: spread(runs.map((r) => r.ingest.messagesPerSecond)),
        ackLatencyMs: { p50: median(runs.map((r) => r.ingest.ackLatencyMs.p50)), p95: median(runs.map((r) => r.ingest.ackLatencyMs.p95)), p99: median(runs.map((r) => r.ingest.ackLatencyMs.p99)) },
        endToEndLatencyMs: {
          p50: median(runs.map((r) => r.endToEnd.latencyMs.p50)),
          p95: median(runs.map((r) => r.endToEnd.latencyMs.p95)),
          p99: median(runs.map((r) => r.endToEnd.latencyMs.p99)),
          p99Spread: spread(runs.map((r) => r.endToEnd.latencyMs.p99)),
        },
        cpuSecondsPer1000: round(median(runs.map((r) => r.cost.cpuSecondsPer1000.total)), 2),
        ownCpuSecondsPer1000: mapDefined(OWN_ROLES[system], (role) => {
          const values = runs.map((r) => roleCpu(r, role)).filter((v): v is number => v !== undefined);
          return values.length === 0 ? undefined : round(median(values), 3);
        }),
        peakRssMb: {
          worker: isSwitchyard(system) ? rss(OWN_ROLES[system].worker!) : undefined,
          api: isSwitchyard(system) ? rss(OWN_ROLES[system].api!) : undefined,
          bareWorker: system === 'bare' ? rss('bareWorker') : undefined,
          floorWorker: isFloor(system) ? rss(OWN_ROLES[system].worker!) : undefined,
          floorApi: isFloor(system) ? rss(OWN_ROLES[system].api!) : undefined,
          temporal: rss('temporal') ?? 0,
        },
        historyEventsPerMessage: events.length ? median(events) : null,
        dataGrowthKbPer1000: growth.length ? round(median(growth), 1) : null,
        delivered: runs.reduce((a, r) => a + r.delivered, 0),
        sent: runs.reduce((a, r) => a + r.messages, 0),
        duplicates: runs.reduce((a, r) => a + r.duplicates, 0),
      };
    })
    .sort((a, b) => a.messages - b.messages || SYSTEMS.indexOf(a.system) - SYSTEMS.indexOf(b.system));
}

export function ratios(summaries: Summary[]): Ratio[] {
  const sizes = [...new Set(summaries.map((s) => s.messages))];
  return sizes.map((messages) => {
    const of = (system: SystemName) => summaries.find((s) => s.messages === messages && s.system === system);
    const [raw, bare, floor, designFloor, sy, plain, unarchived, limited, governed] = [of('raw'), of('bare'), of('floor'), of('design-floor'), of('switchyard'), of('plain'), of('unarchived'), of('limited'), of('governed')];
    const mapped = of('mapped');
    const planned = of('planned');
    const [inserted, scripted] = [of('inserted'), of('scripted')];
    const ratio = (a?: number, b?: number) => (a !== undefined && b ? round(a / b, 3) : null);
    return {
      messages,
      switchyardVsBare: ratio(sy?.endToEndMessagesPerSecond.median, bare?.endToEndMessagesPerSecond.median),
      switchyardVsRaw: ratio(sy?.endToEndMessagesPerSecond.median, raw?.endToEndMessagesPerSecond.median),
      bareVsRaw: ratio(bare?.endToEndMessagesPerSecond.median, raw?.endToEndMessagesPerSecond.median),
      p99VsBare: ratio(sy?.endToEndLatencyMs.p99, bare?.endToEndLatencyMs.p99),
      switchyardVsFloor: ratio(sy?.endToEndMessagesPerSecond.median, floor?.endToEndMessagesPerSecond.median),
      cpuVsFloor: ratio(sy?.cpuSecondsPer1000, floor?.cpuSecondsPer1000),
      switchyardVsDesignFloor:
        sy && designFloor
          ? { throughput: ratio(sy.endToEndMessagesPerSecond.median, designFloor.endToEndMessagesPerSecond.median), cpu: ratio(sy.cpuSecondsPer1000, designFloor.cpuSecondsPer1000), ownCpu: ratio(ownCpu(sy), ownCpu(designFloor)) }
          : null,
      plainVsFloor: ratio(plain?.endToEndMessagesPerSecond.median, floor?.endToEndMessagesPerSecond.median),
      plainCpuVsFloor: ratio(plain?.cpuSecondsPer1000, floor?.cpuSecondsPer1000),
      encryption: sy && plain ? addedCost(sy, plain) : null,
      rateLimit: sy && limited ? addedCost(limited, sy) : null,
      dataControl: sy && governed ? addedCost(governed, sy) : null,
      archive: sy && unarchived ? addedCost(sy, unarchived) : null,
      actions:
        sy && mapped
          ? { ...addedCost(mapped, sy), workerPerRequest: ratio(mapped.ownCpuSecondsPer1000.worker === undefined ? undefined : mapped.ownCpuSecondsPer1000.worker / 2, sy.ownCpuSecondsPer1000.worker) }
          : null,
      trackingPlan: sy && planned ? addedCost(planned, sy) : null,
      insertFunction: sy && inserted ? addedCost(inserted, sy) : null,
      destinationFunction: sy && scripted ? addedCost(scripted, sy) : null,
    };
  });
}

const fmt = (value: number | null | undefined, digits = 0) => (value === null || value === undefined || !Number.isFinite(value) ? '–' : value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }));
const fmtSpread = (s: Spread, digits = 0) => (s.min === s.max ? fmt(s.median, digits) : `${fmt(s.median, digits)} (${fmt(s.min, digits)}–${fmt(s.max, digits)})`);

export function markdownTable(summaries: Summary[], ratioRows: Ratio[]): string {
  const lines = [
    '| N | system | end-to-end msg/s | vs bare | vs floor | vs design floor | vs raw | ingest msg/s | ack p50 / p95 / p99 ms | end-to-end p50 / p95 / p99 ms | CPU s per 1k msgs | CPU vs floor | CPU vs design floor | own processes\' CPU vs design floor | peak RSS MB | history events / msg | data KB per 1k |',
    '|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const s of summaries) {
    const r = ratioRows.find((x) => x.messages === s.messages);
    const vsBare = s.system === 'switchyard' ? r?.switchyardVsBare : s.system === 'bare' ? 1 : null;
    const vsRaw = s.system === 'switchyard' ? r?.switchyardVsRaw : s.system === 'bare' ? r?.bareVsRaw : s.system === 'raw' ? 1 : null;
    const vsFloor = s.system === 'switchyard' ? r?.switchyardVsFloor : s.system === 'plain' ? r?.plainVsFloor : s.system === 'floor' ? 1 : null;
    const cpuVsFloor = s.system === 'switchyard' ? r?.cpuVsFloor : s.system === 'plain' ? r?.plainCpuVsFloor : s.system === 'floor' ? 1 : null;
    const vsDesign = s.system === 'switchyard' ? r?.switchyardVsDesignFloor : s.system === 'design-floor' ? { throughput: 1, cpu: 1, ownCpu: 1 } : null;
    const times = (value: number | null | undefined, digits: number) => (value === null || value === undefined ? '–' : `${fmt(value, digits)}×`);
    const rss =
      isSwitchyard(s.system)
        ? `worker ${fmt(s.peakRssMb.worker)}, API ${fmt(s.peakRssMb.api)}, Temporal ${fmt(s.peakRssMb.temporal)}`
        : s.system === 'bare'
          ? `worker ${fmt(s.peakRssMb.bareWorker)}, Temporal ${fmt(s.peakRssMb.temporal)}`
          : isFloor(s.system)
            ? `worker ${fmt(s.peakRssMb.floorWorker)}${s.peakRssMb.floorApi === undefined ? '' : `, API ${fmt(s.peakRssMb.floorApi)}`}, Temporal ${fmt(s.peakRssMb.temporal)}`
            : '–';
    lines.push(
      `| ${fmt(s.messages)} | ${s.system} | ${fmtSpread(s.endToEndMessagesPerSecond)} | ${times(vsBare, 2)} | ${times(vsFloor, 2)} | ${times(vsDesign?.throughput, 2)} | ${times(vsRaw, 3)} | ${fmtSpread(s.ingestMessagesPerSecond)} | ${fmt(s.ackLatencyMs.p50, 1)} / ${fmt(s.ackLatencyMs.p95, 1)} / ${fmt(s.ackLatencyMs.p99, 1)} | ${fmt(s.endToEndLatencyMs.p50, 1)} / ${fmt(s.endToEndLatencyMs.p95, 1)} / ${fmt(s.endToEndLatencyMs.p99, 1)} | ${fmt(s.cpuSecondsPer1000, 2)} | ${times(cpuVsFloor, 2)} | ${times(vsDesign?.cpu, 2)} | ${times(vsDesign?.ownCpu, 2)} | ${rss} | ${fmt(s.historyEventsPerMessage, 1)} | ${fmt(s.dataGrowthKbPer1000)} |`,
    );
  }
  return lines.join('\n');
}

/** `+3.1 %` for 0.031; a dash when unknown. */
export const percent = (fraction: number | null | undefined) => (fraction === null || fraction === undefined ? '–' : `${fraction >= 0 ? '+' : ''}${fmt(fraction * 100, 1)} %`);

/** Payload encryption's cost: Switchyard beside `plain`, CPU per 1,000 messages of its own processes and of everything; empty when `plain` did not run. */
export function encryptionTable(summaries: Summary[], ratioRows: Ratio[]): string {
  return onOffTable(summaries, ratioRows, 'encryption', 'switchyard', 'plain');
}

/** A rate limit's cost: `limited` beside Switchyard; empty when `limited` did not run. */
export function rateLimitTable(summaries: Summary[], ratioRows: Ratio[]): string {
  return onOffTable(summaries, ratioRows, 'rateLimit', 'limited', 'switchyard');
}

/** Consent and 10 destination filters at ingest: `governed` beside Switchyard; empty when `governed` did not run. */
export function dataControlTable(summaries: Summary[], ratioRows: Ratio[]): string {
  return onOffTable(summaries, ratioRows, 'dataControl', 'governed', 'switchyard');
}

/** An Actions destination with two mappings: `mapped` beside Switchyard; empty when `mapped` did not run. */
export function actionsTable(summaries: Summary[], ratioRows: Ratio[]): string {
  return onOffTable(summaries, ratioRows, 'actions', 'mapped', 'switchyard');
}

/** A connected 50-rule tracking plan at ingest: `planned` beside Switchyard; empty when `planned` did not run. */
export function trackingPlanTable(summaries: Summary[], ratioRows: Ratio[]): string {
  return onOffTable(summaries, ratioRows, 'trackingPlan', 'planned', 'switchyard');
}

/** The archive's cost: Switchyard beside `unarchived` (ARCHIVE_RETENTION=0); empty when `unarchived` did not run. */
export function archiveTable(summaries: Summary[], ratioRows: Ratio[]): string {
  return onOffTable(summaries, ratioRows, 'archive', 'switchyard', 'unarchived');
}

function onOffTable(summaries: Summary[], ratioRows: Ratio[], key: 'encryption' | 'rateLimit' | 'dataControl' | 'archive' | 'actions' | 'trackingPlan' | 'insertFunction' | 'destinationFunction', onSystem: SystemName, offSystem: SystemName): string {
  const rows = ratioRows.filter((r) => r[key]);
  if (rows.length === 0) return '';
  const lines = [
    '| N | worker CPU s per 1k: on / off | added | API CPU s per 1k: on / off | added | all processes: on / off | added |',
    '|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    const on = summaries.find((s) => s.messages === r.messages && s.system === onSystem)!;
    const off = summaries.find((s) => s.messages === r.messages && s.system === offSystem)!;
    const cost = r[key]!;
    lines.push(
      `| ${fmt(r.messages)} | ${fmt(on.ownCpuSecondsPer1000.worker, 2)} / ${fmt(off.ownCpuSecondsPer1000.worker, 2)} | ${percent(cost.worker)} | ${fmt(on.ownCpuSecondsPer1000.api, 2)} / ${fmt(off.ownCpuSecondsPer1000.api, 2)} | ${percent(cost.api)} | ${fmt(on.cpuSecondsPer1000, 2)} / ${fmt(off.cpuSecondsPer1000, 2)} | ${percent(cost.total)} |`,
    );
  }
  return lines.join('\n');
}

/**
 * Every measured run in order, CPU ms per message by component: with one system and -n 5000 -r 6,
 * six consecutive 5,000-message windows on a server whose data grows (docs/performance.md's growth table).
 */
export function runsTable(results: PhaseResult[]): string {
  const lines = [
    '| run | system | N | started | end-to-end msg/s | CPU ms per message: all | Temporal | PostgreSQL | workers | APIs | data KB per 1k |',
    '|---:|---|---:|---|---:|---:|---:|---:|---:|---:|---:|',
  ];
  results.forEach((r, i) => {
    const own = OWN_ROLES[r.system];
    const ms = (role: string | undefined) => (role === undefined ? undefined : roleCpu(r, role));
    lines.push(
      `| ${i + 1} | ${r.system} | ${fmt(r.messages)} | ${r.startedAt.slice(11, 19)} | ${fmt(r.endToEnd.messagesPerSecond)} | ${fmt(r.cost.cpuSecondsPer1000.total, 1)} | ${fmt(ms('temporal'), 1)} | ${fmt(ms('postgres'), 1)} | ${fmt(ms(own.worker), 1)} | ${fmt(ms(own.api), 1)} | ${fmt(r.cost.dataGrowthKbPer1000)} |`,
    );
  });
  return lines.join('\n');
}

function mapDefined<T extends object, V>(object: T, f: (value: NonNullable<T[keyof T]>) => V | undefined): { [K in keyof T]?: V } {
  return Object.fromEntries(Object.entries(object).flatMap(([key, value]) => {
    const mapped = value === undefined ? undefined : f(value as NonNullable<T[keyof T]>);
    return mapped === undefined ? [] : [[key, mapped]];
  })) as { [K in keyof T]?: V };
}

const COLORS: Record<SystemName, string> = { raw: '#9aa5b1', bare: '#3b82f6', floor: '#10b981', 'design-floor': '#047857', switchyard: '#f59e0b', plain: '#a855f7', unarchived: '#78716c', limited: '#ef4444', governed: '#0ea5e9', mapped: '#db2777', planned: '#65a30d', inserted: '#7c3aed', scripted: '#0891b2' };
const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A grouped bar chart on a log scale, one group per N, min–max whiskers over the repeats. */
function panel(x0: number, title: string, unit: string, summaries: Summary[], value: (s: Summary) => Spread, width: number, height: number): string {
  const sizes = [...new Set(summaries.map((s) => s.messages))];
  const values = summaries.flatMap((s) => [value(s).min, value(s).max]).filter((v) => v > 0);
  const lo = 10 ** Math.floor(Math.log10(Math.min(...values)));
  const hi = 10 ** Math.ceil(Math.log10(Math.max(...values)));
  const top = 50;
  const bottom = height - 50;
  const left = x0 + 60;
  const right = x0 + width - 10;
  const y = (v: number) => bottom - ((Math.log10(Math.max(v, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * (bottom - top);
  const parts = [`<text x="${x0 + width / 2}" y="24" text-anchor="middle" font-size="15" font-weight="bold">${escapeXml(title)}</text>`];
  for (let tick = lo; tick <= hi; tick *= 10) {
    parts.push(`<line x1="${left}" x2="${right}" y1="${y(tick)}" y2="${y(tick)}" stroke="#e5e7eb"/>`);
    parts.push(`<text x="${left - 6}" y="${y(tick) + 4}" text-anchor="end" font-size="11">${fmt(tick)}</text>`);
  }
  parts.push(`<text x="${x0 + 14}" y="${(top + bottom) / 2}" font-size="11" transform="rotate(-90 ${x0 + 14} ${(top + bottom) / 2})" text-anchor="middle">${escapeXml(unit)} (log scale)</text>`);
  const groupWidth = (right - left) / sizes.length;
  const barWidth = Math.min(48, (groupWidth - 20) / SYSTEMS.length);
  sizes.forEach((messages, g) => {
    const center = left + groupWidth * (g + 0.5);
    SYSTEMS.forEach((system, k) => {
      const cell = summaries.find((s) => s.messages === messages && s.system === system);
      if (!cell) return;
      const v = value(cell);
      const bx = center + (k - SYSTEMS.length / 2) * barWidth;
      parts.push(`<rect x="${bx + 2}" y="${y(v.median)}" width="${barWidth - 4}" height="${bottom - y(v.median)}" fill="${COLORS[system]}"><title>${escapeXml(`${system}, N=${messages}: ${fmt(v.median, 1)} ${unit}`)}</title></rect>`);
      if (v.max > v.min) parts.push(`<line x1="${bx + barWidth / 2}" x2="${bx + barWidth / 2}" y1="${y(v.min)}" y2="${y(v.max)}" stroke="#111" stroke-width="1.5"/>`);
      parts.push(`<text x="${bx + barWidth / 2}" y="${y(v.median) - 4}" text-anchor="middle" font-size="10">${fmt(v.median, v.median < 10 ? 1 : 0)}</text>`);
    });
    parts.push(`<text x="${center}" y="${bottom + 18}" text-anchor="middle" font-size="12">N = ${fmt(messages)}</text>`);
  });
  parts.push(`<line x1="${left}" x2="${right}" y1="${bottom}" y2="${bottom}" stroke="#111"/>`);
  return parts.join('\n');
}

export function svgChart(summaries: Summary[], subtitle: string): string {
  const width = 1000;
  const height = 420;
  const half = width / 2;
  const legend = SYSTEMS.map((system, k) => `<rect x="${20 + k * 196}" y="${height - 22}" width="14" height="14" fill="${COLORS[system]}"/><text x="${38 + k * 196}" y="${height - 10}" font-size="10">${escapeXml(SYSTEM_TITLES[system])}</text>`).join('\n');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height + 20}" viewBox="0 0 ${width} ${height + 20}" font-family="system-ui, sans-serif">
<rect width="100%" height="100%" fill="white"/>
${panel(0, 'End-to-end throughput (higher is better)', 'messages/s', summaries, (s) => s.endToEndMessagesPerSecond, half, height)}
${panel(half, 'p99 end-to-end latency (lower is better)', 'ms', summaries, (s) => s.endToEndLatencyMs.p99Spread, half, height)}
${legend}
<text x="${width / 2}" y="${height + 12}" text-anchor="middle" font-size="11" fill="#555">${escapeXml(subtitle)}</text>
</svg>
`;
}

/** Single calls: each stage's p50 / p95 / p99 per run (bench/stages.ts); empty when no run has stages. */
export function stagesTable(results: PhaseResult[]): string {
  const runs = results.filter((r) => r.stagesMs);
  if (runs.length === 0) return '';
  const stages = Object.keys(STAGES) as Stage[];
  const lines = [`| N | system | run | ${stages.map((stage) => `${stage} p50 / p95 / p99 ms`).join(' | ')} |`, `|---:|---|---:|${stages.map(() => '---:').join('|')}|`];
  for (const r of runs) lines.push(`| ${fmt(r.messages)} | ${r.system} | ${r.repeat} | ${stages.map((stage) => `${fmt(r.stagesMs![stage].p50, 1)} / ${fmt(r.stagesMs![stage].p95, 1)} / ${fmt(r.stagesMs![stage].p99, 1)}`).join(' | ')} |`);
  return [...lines, '', ...stages.map((stage) => `- ${stage}: ${STAGES[stage]}`)].join('\n');
}

/** An insert function before a webhook: `inserted` beside Switchyard; empty when `inserted` did not run. */
export function insertFunctionTable(summaries: Summary[], ratioRows: Ratio[]): string {
  return onOffTable(summaries, ratioRows, 'insertFunction', 'inserted', 'switchyard');
}

/** A destination function in place of a webhook: `scripted` beside Switchyard; empty when `scripted` did not run. */
export function destinationFunctionTable(summaries: Summary[], ratioRows: Ratio[]): string {
  return onOffTable(summaries, ratioRows, 'destinationFunction', 'scripted', 'switchyard');
}
