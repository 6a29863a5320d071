import { matches } from '@segment/tsub';
import { fieldKey, type FqlCondition } from './fql';
import { ownValueAt } from './safe-path';

/**
 * Whether a message meets a parsed condition, evaluated by @segment/tsub so the semantics are
 * Segment's own ("type strict", as its Go evaluator). tsub is handed only the condition's fields,
 * each under its placeholder: a missing field is FQL's null, and a list right of `in` is wrapped as
 * `{value}`s because tsub reads each element of that list as a path or a `{value}`.
 */
export function conditionMatches(condition: FqlCondition, message: Record<string, unknown>): boolean {
  if (condition.kind === 'all') return true;
  const subject: Record<string, unknown> = {};
  condition.fields.forEach((field, n) => {
    const value = ownValueAt(message, field.path) ?? null;
    subject[fieldKey(n)] = field.asList ? (Array.isArray(value) ? value.map((element: unknown) => ({ value: element })) : []) : value;
  });
  return matches(subject, { type: 'fql', ir: condition.irJson });
}
