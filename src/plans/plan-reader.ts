import { BoundedMap } from '../bounded-map';
import type { Store, TrackingPlanRule } from '../store/types';
import { compilePlanInSlices, type PlanCompileReports } from './compile-plan';
import type { CompiledPlan } from './plan-decision';
import { controlsFrom, type SchemaControls } from './schema-controls';

/** What ingest needs of a source's plan: the compiled plan (absent: none connected) and its controls. */
export interface SourcePlan {
  plan?: CompiledPlan;
  controls: SchemaControls;
}

export type SourcePlanReader = (sourceId: string) => Promise<SourcePlan>;

/** Plans kept compiled per process, the newest revision of each: past this many, the least recently used is dropped. */
const MAX_PLANS = 1_000;
/** Distinct saved controls kept parsed (one per source at most): past this many, the least recently used is dropped. */
const MAX_CONTROLS = 10_000;
/**
 * A plan of at most this many rules is waited for when it changes (its compile takes milliseconds,
 * and the next call is decided by the change, as an operator expects); a larger one keeps serving
 * its previous revision until the new one is compiled.
 */
const WAITED_FOR_RULES = 100;

/** One plan's compiled newest revision, and the revision being compiled when a newer one was seen. */
interface PlanEntry {
  ready?: { revision: number; plan: CompiledPlan; rules: number };
  compiling?: { revision: number; plan: Promise<CompiledPlan> };
}

const ruleLabel = (rule: TrackingPlanRule) => `${rule.type} ${rule.key ?? ''} v${rule.version}`;

/**
 * The plan ingest decides by, read per request as the destinations' rules are (one query: the
 * controls and the plan's revision), so an admin change applies on every API process. A plan's
 * rules are compiled once per revision, in slices that yield to the event loop, never all at once
 * on the ingest path: while a newer revision compiles, requests keep the one already compiled, and
 * only a small plan's change, or a plan's first compile on a process, is waited for. Only the newest revision of a plan is kept.
 */
export function sourcePlanReader(plans: Pick<Store['trackingPlans'], 'forSource' | 'allRules'>, warn: (message: string, planId: string) => void = () => undefined, waitedForRules = WAITED_FOR_RULES): SourcePlanReader {
  const compiled = new BoundedMap<string, PlanEntry>(MAX_PLANS);
  const controlsCache = new BoundedMap<string, SchemaControls>(MAX_CONTROLS);
  const controlsOf = (saved: string | undefined): SchemaControls => {
    if (saved === undefined) return controlsFrom(undefined);
    let controls = controlsCache.get(saved);
    if (!controls) {
      controls = controlsFrom(JSON.parse(saved) as Partial<SchemaControls>);
      controlsCache.set(saved, controls);
    }
    return controls;
  };
  const reportsFor = (planId: string): PlanCompileReports => ({
    skipped: (rule, problem) => warn(`a saved rule does not compile and is skipped (${ruleLabel(rule)}): ${problem}`, planId),
    broken: (rule, reason) => warn(`a tracking-plan rule broke while checking a message and now answers a violation for every message (${ruleLabel(rule)}): ${reason}`, planId),
  });
  const compile = (plan: { id: string; name: string; revision: number }, entry: PlanEntry): Promise<CompiledPlan> => {
    if (entry.compiling?.revision === plan.revision) return entry.compiling.plan;
    let ruleCount = 0;
    const compiling = plans.allRules(plan.id).then((rules) => {
      ruleCount = rules.length;
      return compilePlanInSlices(plan, rules, reportsFor(plan.id));
    });
    entry.compiling = { revision: plan.revision, plan: compiling };
    compiling.then(
      (ready) => {
        if (entry.compiling?.plan === compiling) entry.compiling = undefined;
        if (!entry.ready || entry.ready.revision < plan.revision) entry.ready = { revision: plan.revision, plan: ready, rules: ruleCount };
      },
      // A failed read is not kept: the next request reads again (its caller, if any, sees the error).
      () => {
        if (entry.compiling?.plan === compiling) entry.compiling = undefined;
      },
    );
    return compiling;
  };
  return async (sourceId) => {
    const { plan, controls } = await plans.forSource(sourceId);
    if (!plan) return { controls: controlsOf(controls) };
    let entry = compiled.get(plan.id);
    if (!entry) {
      entry = {};
      compiled.set(plan.id, entry);
    }
    const { ready } = entry;
    if (ready && ready.revision >= plan.revision) return { plan: ready.plan, controls: controlsOf(controls) };
    const newer = compile(plan, entry);
    // A large plan's revision already compiled serves until the newer one is ready; a small plan, or one never compiled here, waits for it.
    return { plan: ready && ready.rules > waitedForRules ? ready.plan : await newer, controls: controlsOf(controls) };
  };
}
