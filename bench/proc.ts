import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/** Linux /proc readings of the bench's processes: CPU time and resident memory. */
const TICKS_PER_SECOND = 100; // USER_HZ; `getconf CLK_TCK` is 100 on Linux

/** User + system CPU seconds a process has used so far (all its threads), or undefined once it is gone. */
export function cpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is parenthesised and may contain spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

export function rssMb(pid: number): number | undefined {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Bytes under a folder (files only, recursively). */
export function folderBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) total += folderBytes(full);
    else if (entry.isFile()) total += statSync(full).size;
  }
  return total;
}

/** One process as /proc/<pid>/stat and /proc/<pid>/status show it (CPU in clock ticks). */
export interface ProcReading {
  pid: number;
  ppid: number;
  utime: number;
  stime: number;
  /** CPU of children this process has waited for (reaped): PostgreSQL backends that exited, for the postmaster. */
  cutime: number;
  cstime: number;
  rssKb: number;
}

/** The fields of a /proc/<pid>/stat line the meter needs (rss is read from status instead). */
export function parseStat(stat: string): Omit<ProcReading, 'rssKb'> {
  const pid = Number(stat.slice(0, stat.indexOf(' ')));
  // Fields after the command name, which is parenthesised and may contain spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { pid, ppid: Number(fields[1]), utime: Number(fields[11]), stime: Number(fields[12]), cutime: Number(fields[13]), cstime: Number(fields[14]) };
}

/**
 * CPU seconds and resident memory of a process tree (a PostgreSQL postmaster and its backends, one
 * per connection): every live process under `root`, each counted with utime + stime + cutime + cstime,
 * so a backend that exited and was reaped still counts (in its parent's cutime/cstime) and none
 * counts twice. RSS is summed (shared memory, e.g. shared_buffers, is counted in each process that
 * touched it). Undefined when `root` is gone.
 */
export function treeUsage(root: number, readings: readonly ProcReading[]): { cpuSeconds: number; rssMb: number } | undefined {
  const children = new Map<number, ProcReading[]>();
  let rootReading: ProcReading | undefined;
  for (const r of readings) {
    if (r.pid === root) rootReading = r;
    const siblings = children.get(r.ppid);
    if (siblings) siblings.push(r);
    else children.set(r.ppid, [r]);
  }
  if (!rootReading) return undefined;
  let ticks = 0;
  let rssKb = 0;
  const seen = new Set<number>();
  const pending = [rootReading];
  while (pending.length > 0) {
    const r = pending.pop()!;
    if (seen.has(r.pid)) continue;
    seen.add(r.pid);
    ticks += r.utime + r.stime + r.cutime + r.cstime;
    rssKb += r.rssKb;
    pending.push(...(children.get(r.pid) ?? []));
  }
  return { cpuSeconds: ticks / TICKS_PER_SECOND, rssMb: rssKb / 1024 };
}

/** Every process /proc lists now (one that exits while it is read is left out). */
export function readAllProcesses(): ProcReading[] {
  const readings: ProcReading[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = parseStat(readFileSync(`/proc/${name}/stat`, 'utf8'));
      const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${name}/status`, 'utf8'));
      readings.push({ ...stat, rssKb: match ? Number(match[1]) : 0 });
    } catch {
      // gone
    }
  }
  return readings;
}

/**
 * Watches named processes over one bench phase: CPU seconds used during it and the highest
 * resident memory sampled (every 200 ms; process trees every second, as that reads all of /proc)
 * while it ran. Roles in `trees` are metered as a process tree (see treeUsage), the others as one
 * process (their own threads only: the sender is the parent of every other bench process).
 */
export class ProcessMeter {
  private readonly cpuAtStart = new Map<string, number>();
  private readonly peakRss = new Map<string, number>();
  private timer?: NodeJS.Timeout;
  private ticks = 0;

  constructor(
    private readonly pids: Record<string, number>,
    private readonly trees: ReadonlySet<string> = new Set(),
  ) {}

  private usage(withTrees: boolean): Map<string, { cpu?: number; rss?: number }> {
    const all = withTrees && [...this.trees].some((role) => role in this.pids) ? readAllProcesses() : [];
    const usage = new Map<string, { cpu?: number; rss?: number }>();
    for (const [role, pid] of Object.entries(this.pids)) {
      if (this.trees.has(role)) {
        if (!withTrees) continue;
        const tree = treeUsage(pid, all);
        usage.set(role, { cpu: tree?.cpuSeconds, rss: tree?.rssMb });
      } else {
        usage.set(role, { cpu: cpuSeconds(pid), rss: rssMb(pid) });
      }
    }
    return usage;
  }

  start(): void {
    for (const [role, { cpu, rss }] of this.usage(true)) {
      this.cpuAtStart.set(role, cpu ?? 0);
      this.peakRss.set(role, rss ?? 0);
    }
    this.timer = setInterval(() => this.sample(this.ticks++ % 5 === 4), 200);
  }

  private sample(withTrees: boolean): Map<string, { cpu?: number; rss?: number }> {
    const usage = this.usage(withTrees);
    for (const [role, { rss }] of usage) this.peakRss.set(role, Math.max(this.peakRss.get(role) ?? 0, rss ?? 0));
    return usage;
  }

  stop(): { cpuSeconds: Record<string, number>; peakRssMb: Record<string, number> } {
    clearInterval(this.timer);
    const usage = this.sample(true);
    const cpu: Record<string, number> = {};
    const rss: Record<string, number> = {};
    for (const role of Object.keys(this.pids)) {
      cpu[role] = (usage.get(role)?.cpu ?? 0) - (this.cpuAtStart.get(role) ?? 0);
      rss[role] = this.peakRss.get(role) ?? 0;
    }
    return { cpuSeconds: cpu, peakRssMb: rss };
  }
}
