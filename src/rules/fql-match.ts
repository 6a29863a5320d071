import { matches } from '@segment/tsub';
import { fieldKey, type FqlCondition } from './fql';

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
    const value = valueAt(message, field.path) ?? null;
    subject[fieldKey(n)] = field.asList ? (Array.isArray(value) ? value.map((element: unknown) => ({ value: element })) : []) : value;
  });
  return matches(subject, { type: 'fql', ir: condition.irJson });
}

/** The value at a path (one name per segment, or dotted); undefined when any step is missing. */
export function valueAt(message: Record<string, unknown>, path: string[] | string): unknown {
  let value: unknown = message;
  for (const key of typeof path === 'string' ? path.split('.') : path) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}
