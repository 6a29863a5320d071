/**
 * How long a tracking-plan change holds an API process's event loop: a plan of 2,000 TRACK rules
 * (bench/tracking-plan-rules.ts' shape) is compiled by the plan reader as ingest would meet its
 * new revision, while a 1 ms timer measures the longest stretch the loop could not run it. The
 * promise (docs/performance.md) is that no stretch exceeds 50 ms: the plan compiles in slices
 * (src/plans/compile-plan.ts compilePlanInSlices) and calls keep the previous revision meanwhile.
 * No HTTP, no store: the reader is handed the rules as the store would answer them.
 *
 *   npm run bench -- --plan-stall [--rules N]   (default 2,000; or npx tsx bench/plan-compile-stall.ts)
 */
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { sourcePlanReader } from '../src/plans/plan-reader';
import type { TrackingPlanRule } from '../src/store/types';
import { COMMON_RULE, eventRule } from './tracking-plan-rules';

/** The rule count `--rules N` asks for, 2,000 without it. */
export function ruleCount(args: string[]): number {
  const at = args.indexOf('--rules');
  const count = at >= 0 ? Number(args[at + 1]) : 2_000;
  if (!Number.isInteger(count) || count < 1) throw new Error(`--rules: must be a whole number of rules, got ${args[at + 1]}`);
  return count;
}

/** One change of a `count`-rule plan, measured; printed as one JSON line. */
export async function planCompileStall(count: number): Promise<void> {
  const stamp = new Date().toISOString();
  const rules: TrackingPlanRule[] = [...Array.from({ length: count - 1 }, (_, i) => eventRule(`Event ${i}`)), COMMON_RULE].map((rule) => ({ ...rule, createdAt: stamp, updatedAt: stamp }));
  const state = { revision: 1 };
  const reader = sourcePlanReader({ forSource: async () => ({ plan: { id: 'tp_bench', name: 'bench', revision: state.revision } }), allRules: async () => rules });

  // The first compile (a process meeting the plan for the first time) is waited for; then a change.
  let started = performance.now();
  await reader('src_bench');
  const firstMs = performance.now() - started;

  let longestGap = 0;
  let last = performance.now();
  const tick = setInterval(() => {
    const now = performance.now();
    longestGap = Math.max(longestGap, now - last);
    last = now;
  }, 1);
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  state.revision = 2;
  started = performance.now();
  const previous = (await reader('src_bench')).plan;
  const answeredMs = performance.now() - started;
  let current = previous;
  while (current === previous) {
    await new Promise((resolve) => setTimeout(resolve, 5));
    current = (await reader('src_bench')).plan;
  }
  const recompileMs = performance.now() - started;
  delay.disable();
  clearInterval(tick);
  console.log(
    JSON.stringify({
      rules: count,
      firstCompileMs: Math.round(firstMs),
      changeAnsweredWithPreviousRevisionMs: Number(answeredMs.toFixed(2)),
      recompileMs: Math.round(recompileMs),
      longestEventLoopHoldMs: Number(longestGap.toFixed(1)),
      eventLoopDelayMaxMs: Number((delay.max / 1e6).toFixed(1)),
      eventLoopDelayP99Ms: Number((delay.percentile(99) / 1e6).toFixed(1)),
    }),
  );
}

if (require.main === module) {
  planCompileStall(ruleCount(process.argv.slice(2))).catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
