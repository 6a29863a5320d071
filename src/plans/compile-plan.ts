import type { MessageBody } from '../delivery/types';
import type { TrackingPlanRule } from '../store/types';
import type { CompiledPlan, CompiledRuleVersion } from './plan-decision';
import { compileRule } from './rule-validator';
import type { SchemaError } from './violations';

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A passing message's errors: one frozen list for all, so a valid event makes none. */
const NO_ERRORS: readonly SchemaError[] = Object.freeze([]);

/** The names a rule plans: the keys under `properties.properties.properties` (events) or `properties.traits.properties`. */
export function plannedNames(type: string, jsonSchema: Record<string, unknown>): Set<string> {
  const section = type === 'IDENTIFY' || type === 'GROUP' ? 'traits' : 'properties';
  const top = isObject(jsonSchema.properties) ? jsonSchema.properties[section] : undefined;
  const names = isObject(top) && isObject(top.properties) ? Object.keys(top.properties) : [];
  return new Set(names);
}

/**
 * A plan's saved rules made into what the decision reads, each version compiled once. A rule
 * that no longer compiles (saved by an older version's looser rules) is left out and reported,
 * never guessed at: its event then counts as unplanned.
 */
export function compilePlan(plan: { id: string; name: string }, rules: readonly TrackingPlanRule[], skipped: (rule: TrackingPlanRule, problem: string) => void = () => undefined): CompiledPlan {
  const byType = new Map<string, Map<string, CompiledRuleVersion[]>>();
  for (const rule of rules) {
    const compiled = compileRule(rule.jsonSchema);
    if (!compiled.ok) {
      skipped(rule, `${compiled.path || '(schema)'}: ${compiled.problem}`);
      continue;
    }
    const { validate } = compiled;
    const check = (message: MessageBody): readonly SchemaError[] => (validate(message) ? NO_ERRORS : ((validate.errors ?? NO_ERRORS) as SchemaError[]));
    if (!byType.has(rule.type)) byType.set(rule.type, new Map());
    const byKey = byType.get(rule.type)!;
    const key = rule.key ?? '';
    if (!byKey.has(key)) byKey.set(key, []);
    byKey.get(key)!.push({ version: rule.version, check, planned: plannedNames(rule.type, rule.jsonSchema) });
  }
  for (const byKey of byType.values()) for (const versions of byKey.values()) versions.sort((a, b) => a.version - b.version);
  return { id: plan.id, name: plan.name, rules: byType };
}
