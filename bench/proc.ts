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

/**
 * Watches named processes over one bench phase: CPU seconds used during it and the highest
 * resident memory sampled (every 200 ms) while it ran.
 */
export class ProcessMeter {
  private readonly cpuAtStart = new Map<string, number>();
  private readonly peakRss = new Map<string, number>();
  private timer?: NodeJS.Timeout;

  constructor(private readonly pids: Record<string, number>) {}

  start(): void {
    for (const [role, pid] of Object.entries(this.pids)) {
      this.cpuAtStart.set(role, cpuSeconds(pid) ?? 0);
      this.peakRss.set(role, rssMb(pid) ?? 0);
    }
    this.timer = setInterval(() => this.sample(), 200);
  }

  private sample(): void {
    for (const [role, pid] of Object.entries(this.pids)) {
      this.peakRss.set(role, Math.max(this.peakRss.get(role) ?? 0, rssMb(pid) ?? 0));
    }
  }

  stop(): { cpuSeconds: Record<string, number>; peakRssMb: Record<string, number> } {
    clearInterval(this.timer);
    this.sample();
    const cpu: Record<string, number> = {};
    const rss: Record<string, number> = {};
    for (const [role, pid] of Object.entries(this.pids)) {
      cpu[role] = (cpuSeconds(pid) ?? 0) - (this.cpuAtStart.get(role) ?? 0);
      rss[role] = this.peakRss.get(role) ?? 0;
    }
    return { cpuSeconds: cpu, peakRssMb: rss };
  }
}
