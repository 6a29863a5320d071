/**
 * What a violation is called, in the words of Segment's Violations page and its
 * `Violation Generated` events. Pure: the plan decision makes them from a validator's errors.
 */

/** The stage of the plan decision a violation comes from, in the order they decide (plan-decision.ts). */
export const PLAN_STAGES = ['unplanned-event', 'unplanned-properties', 'rule-violations', 'common-violations'] as const;
export type PlanStage = (typeof PLAN_STAGES)[number];

/**
 * Every `violationType`: the two unplanned kinds, then one per JSON Schema keyword family (the
 * metric's label, so bounded): Required (a required name missing), Datatype (`type`), Pattern,
 * Enum (`enum`, `const`), Format, Range (minimum, maximum and their exclusive forms, multipleOf),
 * Length (minLength, maxLength), Items (minItems, maxItems, uniqueItems, contains), Additional-Properties,
 * Composition (allOf, anyOf, oneOf, not, if/then/else), and Other for any keyword left.
 */
export const VIOLATION_TYPES = [
  'Unplanned-Event',
  'Unplanned-Property',
  'Required',
  'Datatype',
  'Pattern',
  'Enum',
  'Format',
  'Range',
  'Length',
  'Items',
  'Additional-Properties',
  'Composition',
  'Other',
] as const;
export type ViolationType = (typeof VIOLATION_TYPES)[number];

export interface Violation {
  violationType: ViolationType;
  /** Dotted, from the message's root: `properties.price`, `traits.email`, `context.app.version`. */
  field: string;
  /** Names and rules only, never a value of the message: `properties.price must be number`. */
  description: string;
  stage: PlanStage;
}

const BY_KEYWORD: Record<string, ViolationType> = {
  required: 'Required',
  dependentRequired: 'Required',
  dependencies: 'Required',
  type: 'Datatype',
  pattern: 'Pattern',
  enum: 'Enum',
  const: 'Enum',
  format: 'Format',
  minimum: 'Range',
  maximum: 'Range',
  exclusiveMinimum: 'Range',
  exclusiveMaximum: 'Range',
  multipleOf: 'Range',
  minLength: 'Length',
  maxLength: 'Length',
  minItems: 'Items',
  maxItems: 'Items',
  uniqueItems: 'Items',
  contains: 'Items',
  minContains: 'Items',
  maxContains: 'Items',
  additionalProperties: 'Additional-Properties',
  unevaluatedProperties: 'Additional-Properties',
  allOf: 'Composition',
  anyOf: 'Composition',
  oneOf: 'Composition',
  not: 'Composition',
  if: 'Composition',
};

/** What the plan decision reads of a validator's error: the boundary for user programs answers these. */
export type { SchemaError } from '../programs/json-schema';
import type { SchemaError } from '../programs/json-schema';
import { violationText } from './violation-text';

/** `/properties/price` → `properties.price` (JSON Pointer escapes undone). */
export function fieldOf(instancePath: string): string {
  return instancePath
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');
}

/**
 * A validator's error as a violation. The field of a missing required name is that name's own
 * field (`properties.products`), as Segment names it; the description is a person's sentence that
 * names rules, never values (violation-text.ts).
 */
export function violationOf(error: SchemaError, stage: PlanStage): Violation {
  const violationType = BY_KEYWORD[error.keyword] ?? 'Other';
  const at = fieldOf(error.instancePath);
  const missing = error.keyword === 'required' && typeof error.params.missingProperty === 'string' ? error.params.missingProperty : undefined;
  const field = missing === undefined ? at : at === '' ? missing : `${at}.${missing}`;
  const description = violationText(error, field);
  return { violationType, field, description, stage };
}
