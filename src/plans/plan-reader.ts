import type { Store } from '../store/types';
import { compilePlan } from './compile-plan';
import type { CompiledPlan } from './plan-decision';
import { controlsFrom, type SchemaControls } from './schema-controls';

/** What ingest needs of a source's plan: the compiled plan (absent: none connected) and its controls. */
export interface SourcePlan {
  plan?: CompiledPlan;
  controls: SchemaControls;
}

export type SourcePlanReader = (sourceId: string) => Promise<SourcePlan>;

/** Compiled plans kept per (plan, revision); past this many the cache starts over. */
const MAX_COMPILED = 1_000;

/**
 * The plan ingest decides by, read per request as the destinations' rules are (one
 * query: the controls and the plan's revision), so an admin change applies to the next request on
 * every API process. The rules are read and compiled only when a plan's revision changes: plans
 * change rarely, and a compile costs milliseconds where a validation costs a fraction of one.
 */
export function sourcePlanReader(plans: Pick<Store['trackingPlans'], 'forSource' | 'allRules'>, warn: (message: string, planId: string) => void = () => undefined): SourcePlanReader {
  const compiled = new Map<string, Promise<CompiledPlan>>();
  const controlsCache = new Map<string, SchemaControls>();
  const controlsOf = (saved: string | undefined): SchemaControls => {
    if (saved === undefined) return controlsFrom(undefined);
    let controls = controlsCache.get(saved);
    if (!controls) {
      if (controlsCache.size >= MAX_COMPILED) controlsCache.clear();
      controls = controlsFrom(JSON.parse(saved) as Partial<SchemaControls>);
      controlsCache.set(saved, controls);
    }
    return controls;
  };
  return async (sourceId) => {
    const { plan, controls } = await plans.forSource(sourceId);
    if (!plan) return { controls: controlsOf(controls) };
    const key = `${plan.id}@${plan.revision}`;
    let found = compiled.get(key);
    if (!found) {
      if (compiled.size >= MAX_COMPILED) compiled.clear();
      found = plans.allRules(plan.id).then((rules) => compilePlan(plan, rules, (rule, problem) => warn(`a saved rule does not compile and is skipped (${rule.type} ${rule.key ?? ''} v${rule.version}): ${problem}`, plan.id)));
      // A failed read is not kept: the next request reads again.
      found.catch(() => compiled.delete(key));
      compiled.set(key, found);
    }
    return { plan: await found, controls: controlsOf(controls) };
  };
}
