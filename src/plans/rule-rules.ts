import { compileRule } from './rule-validator';

/** Segment's rule types (`RuleV1.type`). */
export const RULE_TYPES = ['TRACK', 'IDENTIFY', 'GROUP', 'PAGE', 'SCREEN', 'COMMON'] as const;
export type RuleType = (typeof RULE_TYPES)[number];

/** The types whose rules have no key: one rule (per version) for every message of that type. */
const KEYLESS: readonly string[] = ['COMMON', 'IDENTIFY', 'GROUP'];

/** How a 400 names a rule: `rules[2] (TRACK "Order Completed" version 1)`. */
export const ruleName = (rule: { type: string; key?: string; version: number }, at: string) => `${at} (${rule.type}${rule.key !== undefined ? ` ${JSON.stringify(rule.key)}` : ''} version ${rule.version})`;

/**
 * Why a rule cannot be saved, naming it and the path inside its schema
 * (`rules[0] (TRACK "Signed Up" version 1).jsonSchema/properties/…/pattern: is not an RE2 …`),
 * or undefined: TRACK needs its event name as key, keyless types take none, and the schema compiles.
 */
export function ruleProblem(rule: { type: string; key?: string; newKey?: string; jsonSchema: unknown; version: number }, at: string): string | undefined {
  const name = ruleName(rule, at);
  if (rule.type === 'TRACK' && rule.key === undefined) return `${name}.key: is required for TRACK rules (the event name)`;
  if (KEYLESS.includes(rule.type) && (rule.key !== undefined || rule.newKey !== undefined)) return `${name}.key: ${rule.type} rules have no key`;
  const compiled = compileRule(rule.jsonSchema);
  if (!compiled.ok) return `${name}.jsonSchema${compiled.path}: ${compiled.problem}`;
  return undefined;
}
