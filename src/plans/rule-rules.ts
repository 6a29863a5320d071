import { compileProgram } from '../programs/compile-program';

/** Segment's rule types (`RuleV1.type`). */
export const RULE_TYPES = ['TRACK', 'IDENTIFY', 'GROUP', 'PAGE', 'SCREEN', 'COMMON'] as const;
export type RuleType = (typeof RULE_TYPES)[number];

/** The types whose rules have no key: one rule (per version) for every message of that type. */
const KEYLESS: readonly string[] = ['COMMON', 'IDENTIFY', 'GROUP'];

/** How a 400 names a rule, after the field: `(TRACK "Order Completed" version 1)`. */
export const ruleName = (rule: { type: string; key?: string; version: number }) => `(${rule.type}${rule.key !== undefined ? ` ${JSON.stringify(rule.key)}` : ''} version ${rule.version})`;

/**
 * Why a rule cannot be saved, the field first as every 400 (`rules[0].jsonSchema/properties/…/pattern:`),
 * then the rule (`(TRACK "Signed Up" version 1)`) and the problem,
 * or undefined: TRACK needs its event name as key, keyless types take none, and the schema passes
 * the boundary for user programs (src/programs: its closed vocabulary and bounds).
 */
export function ruleProblem(rule: { type: string; key?: string; newKey?: string; jsonSchema: unknown; version: number }, at: string): string | undefined {
  const name = ruleName(rule);
  if (rule.type === 'TRACK' && rule.key === undefined) return `${at}.key: ${name} is required for TRACK rules (the event name)`;
  if (KEYLESS.includes(rule.type) && (rule.key !== undefined || rule.newKey !== undefined)) return `${at}.key: ${name} ${rule.type} rules have no key`;
  const compiled = compileProgram('json-schema', rule.jsonSchema);
  if (!compiled.ok) return `${at}.jsonSchema${compiled.error.field}: ${name} ${compiled.error.rule}`;
  return undefined;
}
