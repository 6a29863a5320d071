import type { TrackingPlanRule } from '../store/types';
import type { CompiledPlan, CompiledRuleVersion } from './plan-decision';
import { compileProgram } from '../programs/compile-program';

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The names a rule plans: the keys under `properties.properties.properties` (events) or `properties.traits.properties`. */
export function plannedNames(type: string, jsonSchema: Record<string, unknown>): Set<string> {
  const section = type === 'IDENTIFY' || type === 'GROUP' ? 'traits' : 'properties';
  const top = isObject(jsonSchema.properties) ? jsonSchema.properties[section] : undefined;
  const names = isObject(top) && isObject(top.properties) ? Object.keys(top.properties) : [];
  return new Set(names);
}

/** What compiling a plan reports: a saved rule that does not compile, and a compiled one that broke at evaluation. */
export interface PlanCompileReports {
  skipped?: (rule: TrackingPlanRule, problem: string) => void;
  broken?: (rule: TrackingPlanRule, reason: string) => void;
}

type ByType = Map<string, Map<string, CompiledRuleVersion[]>>;

/** One rule compiled through the boundary for user programs (src/programs) into the plan being built. */
function addRule(byType: ByType, rule: TrackingPlanRule, reports: PlanCompileReports): void {
  const compiled = compileProgram('json-schema', rule.jsonSchema, { broken: (reason) => reports.broken?.(rule, reason) });
  if (!compiled.ok) {
    reports.skipped?.(rule, `${compiled.error.field || '(schema)'}: ${compiled.error.rule}`);
    return;
  }
  if (!byType.has(rule.type)) byType.set(rule.type, new Map());
  const byKey = byType.get(rule.type)!;
  const key = rule.key ?? '';
  if (!byKey.has(key)) byKey.set(key, []);
  byKey.get(key)!.push({ version: rule.version, check: compiled.program.check, planned: plannedNames(rule.type, rule.jsonSchema) });
}

function planOf(plan: { id: string; name: string }, byType: ByType): CompiledPlan {
  for (const byKey of byType.values()) for (const versions of byKey.values()) versions.sort((a, b) => a.version - b.version);
  return { id: plan.id, name: plan.name, rules: byType };
}

/**
 * A plan's saved rules made into what the decision reads, each version compiled once. A rule
 * that no longer compiles (saved by an older version's looser rules) is left out and reported,
 * never guessed at: its event then counts as unplanned. A rule that breaks at evaluation answers
 * a violation saying so from then on (reported once), never a pass and never a throw into ingestion.
 */
export function compilePlan(plan: { id: string; name: string }, rules: readonly TrackingPlanRule[], reports: PlanCompileReports = {}): CompiledPlan {
  const byType: ByType = new Map();
  for (const rule of rules) addRule(byType, rule, reports);
  return planOf(plan, byType);
}

/** How long a plan's compile holds the event loop before it yields to requests waiting behind it. */
export const COMPILE_SLICE_MS = 10;

/**
 * compilePlan in slices of COMPILE_SLICE_MS, yielding to the event loop between them: a
 * 2,000-rule plan takes seconds to compile, and the API process serves every source meanwhile
 * (bench/plan-compile-stall.ts measures the longest hold).
 */
export async function compilePlanInSlices(plan: { id: string; name: string }, rules: readonly TrackingPlanRule[], reports: PlanCompileReports = {}, now: () => number = performance.now.bind(performance)): Promise<CompiledPlan> {
  const byType: ByType = new Map();
  let sliceStart = now();
  for (const rule of rules) {
    addRule(byType, rule, reports);
    if (now() - sliceStart >= COMPILE_SLICE_MS) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      sliceStart = now();
    }
  }
  return planOf(plan, byType);
}
