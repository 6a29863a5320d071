import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** A V8 CPU profile (`node --cpu-prof`), the parts the bench reads. */
export interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  /** µs between samples (the first from startTime), and the profile's start on V8's monotonic clock. */
  timeDeltas: number[];
  startTime: number;
}

/** The functions a V8 CPU profile spent most of its samples in (self time), as "share function file:line". */
export function topFunctions(file: string, count = 12): string[] {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map<string, number>();
  for (const sample of profile.samples) {
    const frame = byId.get(sample)?.callFrame;
    if (!frame) continue;
    const where = frame.url ? ` ${frame.url.replace(/^.*\/node_modules\//, '').replace(/^file:\/\/.*?\/(src|bench)\//, '$1/')}:${frame.lineNumber + 1}` : '';
    const key = `${frame.functionName || '(anonymous)'}${where}`;
    self.set(key, (self.get(key) ?? 0) + 1);
  }
  const total = profile.samples.length || 1;
  return [...self]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([key, samples]) => `${((100 * samples) / total).toFixed(1).padStart(5)}%  ${key}`);
}

/** A role's profiles (one per thread: main, workflow threads, tsx's loader), busiest first: (file, share of samples not idle). */
export function busiestProfiles(dir: string): { file: string; busy: number }[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.cpuprofile'))
    .map((name) => {
      const file = path.join(dir, name);
      const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
      const idle = new Set(profile.nodes.filter((node) => node.callFrame.functionName === '(idle)').map((node) => node.id));
      const busy = profile.samples.filter((sample) => !idle.has(sample)).length;
      return { file, busy: busy / (profile.samples.length || 1), samples: busy };
    })
    .sort((a, b) => b.samples - a.samples)
    .map(({ file, busy }) => ({ file, busy }));
}
