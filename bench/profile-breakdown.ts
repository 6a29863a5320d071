import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { SystemName } from './systems';
import type { CpuProfile, ProfileNode } from './profile';
import { OWN_ROLES } from './report';

/**
 * Where a `--profile` run's worker and API time went, phase by phase:
 *   npx tsx bench/profile-breakdown.ts bench/results/<stamp>-<label>.json [--top 15]
 * For each measured phase, each of the system's own processes (floorWorker-1, worker-1, api-1 …)
 * gets its busy CPU ms per message split by thread (main, workflow threads) and by where the
 * samples were: the Temporal SDK's promise hook (a source-mapped stack trace per workflow promise),
 * and then by package (node_modules), Switchyard's files, Node's internals or V8 (GC, program).
 * Profiles name the wall-clock second they started; samples are placed by their offset from it, so
 * a phase's edges are within about a second.
 */
type Frame = ProfileNode['callFrame'];
interface Phase {
  system: SystemName;
  messages: number;
  repeat: number;
  startedAt: string;
  durationSeconds: number;
}

export function bucketOf(frame: Frame): string {
  const url = frame.url;
  // Native frames by name: runInContext is the worker thread entering the workflow sandbox (the
  // activation's microtasks run inside it), postMessage the hop between threads.
  if (!url) return frame.functionName.startsWith('(') ? frame.functionName : `${frame.functionName || 'anonymous'} (native)`;
  const pkg = /node_modules\/((@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  if (url.includes('workflow-bundle')) return 'workflow bundle (workflow code and the SDK inside the sandbox)';
  const own = /\/(src|bench)\/(.*)$/.exec(url);
  if (own) return `${own[1]}/${own[2]}`;
  if (url.startsWith('node:')) return 'Node internals';
  return 'other';
}

const isPromiseHook = (frame: Frame) => frame.functionName === 'init' && frame.url.includes('workflow/vm-shared');

/** Busy ms of one profile inside [from, to] (epoch ms): in the promise hook, and by bucket of the sampled frame. */
function split(file: string, from: number, to: number): { busy: number; hook: number; buckets: Map<string, number> } {
  const stamp = /CPU\.(\d{4})(\d{2})(\d{2})\.(\d{2})(\d{2})(\d{2})/.exec(path.basename(file));
  if (!stamp) throw new Error(`${file}: not a Node --cpu-prof file name`);
  const wallStart = Date.parse(`${stamp[1]}-${stamp[2]}-${stamp[3]}T${stamp[4]}:${stamp[5]}:${stamp[6]}Z`);
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const buckets = new Map<string, number>();
  let busy = 0;
  let hook = 0;
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i];
    const wall = wallStart + (at - profile.startTime) / 1000;
    if (wall < from || wall > to) continue;
    const node = byId.get(profile.samples[i])!;
    if (node.callFrame.functionName === '(idle)') continue;
    const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    busy += ms;
    let inHook = false;
    for (let id: number | undefined = node.id; id !== undefined && !inHook; id = parent.get(id)) inHook = isPromiseHook(byId.get(id)!.callFrame);
    if (inHook) hook += ms;
    else buckets.set(bucketOf(node.callFrame), (buckets.get(bucketOf(node.callFrame)) ?? 0) + ms);
  }
  return { busy, hook, buckets };
}

function main(): void {
  const [resultsFile, ...rest] = process.argv.slice(2);
  if (!resultsFile) throw new Error('usage: npx tsx bench/profile-breakdown.ts <results .json of a --profile run> [--top N]');
  const top = rest[0] === '--top' ? Number(rest[1]) : 12;
  const report = JSON.parse(readFileSync(resultsFile, 'utf8')) as { results: Phase[] };
  const profiles = resultsFile.replace(/\.json$/, '-profiles');
  const roles = readdirSync(profiles);
  for (const phase of report.results) {
    const from = Date.parse(phase.startedAt);
    const to = from + phase.durationSeconds * 1000;
    console.log(`\n## ${phase.system}, N=${phase.messages} run ${phase.repeat} (${phase.startedAt.slice(11, 19)}, ${phase.durationSeconds} s): CPU ms per message, profiled`);
    for (const kind of Object.values(OWN_ROLES[phase.system] ?? {})) {
      const processes = roles.filter((role) => role === kind || role.startsWith(`${kind}-`));
      const threads = new Map<string, { busy: number; hook: number }>();
      const buckets = new Map<string, number>();
      for (const role of processes) {
        for (const name of readdirSync(path.join(profiles, role)).filter((n) => n.endsWith('.cpuprofile'))) {
          const part = split(path.join(profiles, role, name), from, to);
          // Node numbers threads in the file name: 0 the main thread, then tsx's loader, then workflow threads.
          const thread = name.split('.')[4] === '0' ? 'main thread' : 'other threads (workflow threads, loader)';
          const sum = threads.get(thread) ?? { busy: 0, hook: 0 };
          threads.set(thread, { busy: sum.busy + part.busy, hook: sum.hook + part.hook });
          for (const [bucket, ms] of part.buckets) buckets.set(bucket, (buckets.get(bucket) ?? 0) + ms);
        }
      }
      const per = (ms: number) => (ms / phase.messages).toFixed(2);
      const total = [...threads.values()].reduce((a, t) => a + t.busy, 0);
      const hook = [...threads.values()].reduce((a, t) => a + t.hook, 0);
      console.log(`\n${kind} (${processes.join(', ')}): ${per(total)} ms, of which the promise hook ${per(hook)} ms`);
      for (const [thread, t] of threads) console.log(`  ${thread}: ${per(t.busy)} ms`);
      for (const [bucket, ms] of [...buckets].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${per(ms).padStart(6)}  ${bucket}`);
    }
  }
}

if (require.main === module) main();
