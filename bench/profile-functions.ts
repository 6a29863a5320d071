import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { CpuProfile } from './profile';

/**
 * Inclusive CPU µs per message of each of Switchyard's own functions (src/, bench/), or with
 * `--bundle` of each function in the workflow bundle, in one role's `--profile` files inside one
 * measured phase: the share of samples a function was on the stack for, per message.
 *   npx tsx bench/profile-functions.ts bench/results/<run>-profiles/worker 2026-12-08T02:32:35Z 19.11 500 [--bundle] [--top 60]
 * The phase's start (UTC) and seconds are the ones bench/profile-breakdown.ts prints for it.
 * Profiles name the wall-clock second they started, so a phase's edges are within about a second.
 */
function main(): void {
  const args = process.argv.slice(2);
  const bundle = args.includes('--bundle');
  const topAt = args.indexOf('--top');
  const top = topAt >= 0 ? Number(args[topAt + 1]) : 60;
  const [dir, startedAt, seconds, messages] = args.filter((arg, i) => !arg.startsWith('--') && args[i - 1] !== '--top');
  if (!dir || !startedAt || !seconds || !messages) throw new Error('usage: npx tsx bench/profile-functions.ts <profiles dir of a role> <phase start, UTC> <phase seconds> <messages> [--bundle] [--top N]');
  const from = Date.parse(startedAt);
  const to = from + Number(seconds) * 1000;
  const inclusive = new Map<string, number>();
  let busy = 0;
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.cpuprofile'))) {
    const stamp = /CPU\.(\d{4})(\d{2})(\d{2})\.(\d{2})(\d{2})(\d{2})/.exec(name);
    if (!stamp) continue;
    const wallStart = Date.parse(`${stamp[1]}-${stamp[2]}-${stamp[3]}T${stamp[4]}:${stamp[5]}:${stamp[6]}Z`);
    const profile = JSON.parse(readFileSync(path.join(dir, name), 'utf8')) as CpuProfile;
    const byId = new Map(profile.nodes.map((node) => [node.id, node]));
    const parent = new Map<number, number>();
    for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
    let at = profile.startTime;
    for (let i = 0; i < profile.samples.length; i++) {
      at += profile.timeDeltas[i];
      const wall = wallStart + (at - profile.startTime) / 1000;
      if (wall < from || wall > to) continue;
      const sampled = byId.get(profile.samples[i])!;
      if (sampled.callFrame.functionName === '(idle)') continue;
      const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000;
      busy += ms;
      // Each function once per sample, however deep it recurses.
      const seen = new Set<string>();
      for (let id: number | undefined = sampled.id; id !== undefined; id = parent.get(id)) {
        const frame = byId.get(id)!.callFrame;
        const file = bundle ? (frame.url.includes('workflow-bundle') ? 'bundle' : undefined) : /\/((src|bench)\/.*)$/.exec(frame.url)?.[1];
        if (file === undefined) continue;
        const key = `${file} ${frame.functionName || '(anonymous)'}:${frame.lineNumber + 1}`;
        if (seen.has(key)) continue;
        seen.add(key);
        inclusive.set(key, (inclusive.get(key) ?? 0) + ms);
      }
    }
  }
  const perMessage = (ms: number) => (1000 * ms) / Number(messages);
  console.log(`busy: ${(perMessage(busy) / 1000).toFixed(2)} ms per message`);
  for (const [key, ms] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${perMessage(ms).toFixed(0).padStart(6)} µs  ${key}`);
}

main();
