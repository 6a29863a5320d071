/**
 * Personas vocabulary shared by the API, the sync workflows and their activities. Plain data only:
 * these shapes cross Temporal.
 */

/** The two kinds of computation the seed names ("Computed traits and audiences"). */
export type ComputationKind = 'audience' | 'computed_trait';

/** What a sync workflow is given: which definition to sync (never the definition itself). */
export interface ComputationRef {
  kind: ComputationKind;
  id: string;
}

export const TRAIT_OPS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'exists', 'contains'] as const;
export type TraitOp = (typeof TRAIT_OPS)[number];

export const COUNT_OPS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte'] as const;
export type CountOp = (typeof COUNT_OPS)[number];

export type Scalar = string | number | boolean;

/** `{"trait": "plan", "op": "eq", "value": "Premium"}` */
export interface TraitCondition {
  trait: string;
  op: TraitOp;
  value?: Scalar;
}

/** `{"property": "total", "op": "gt", "value": 50}`, inside an event condition's `where`. */
export interface PropertyCondition {
  property: string;
  op: TraitOp;
  value?: Scalar;
}

/** `{"event": "Order Completed", "count": {"op": "gte", "value": 1}, "within": "30d", "where": [..]}` */
export interface EventCondition {
  event: string;
  count?: { op: CountOp; value: number };
  within?: string;
  where?: PropertyCondition[];
}

export type Condition = TraitCondition | EventCondition | { all: Condition[] } | { any: Condition[] } | { not: Condition };

export const COMPUTED_TRAIT_TYPES = ['count', 'sum', 'avg', 'min', 'max', 'most_frequent', 'first', 'last'] as const;
export type ComputedTraitType = (typeof COMPUTED_TRAIT_TYPES)[number];

/** `{"type": "sum", "event": "Order Completed", "property": "total", "within": "180d"}` */
export interface ComputedTraitDefinition {
  type: ComputedTraitType;
  event: string;
  property?: string;
  within?: string;
}
