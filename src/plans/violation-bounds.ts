import type { Violation } from './violations';

/**
 * How many violations one message may make, and how long a name a violation may quote. A sender
 * chooses how many array items and property names a message carries: without these bounds one 12 KB
 * event made 6,000 violations, each a stored row and a forwarded `Violation Generated`. Segment groups
 * violations per field, not per item, and so does this. Pure.
 */

/** At most this many violations per message, the last of them the summary of the rest when there are more. */
export const MAX_VIOLATIONS_PER_MESSAGE = 20;

/** The longest name (event, field) a violation quotes in its field or description, in characters. */
export const MAX_VIOLATION_NAME_CHARS = 200;

/** The field of the summary violation that counts a message's violations past the bound. */
export const MORE_VIOLATIONS_FIELD = '(more)';

const ELLIPSIS = '…';

/** A name cut to MAX_VIOLATION_NAME_CHARS characters (whole code points), `…` marking a cut. */
export function boundedName(name: string): string {
  if (name.length <= MAX_VIOLATION_NAME_CHARS) return name;
  const points = Array.from(name);
  if (points.length <= MAX_VIOLATION_NAME_CHARS) return name;
  return points.slice(0, MAX_VIOLATION_NAME_CHARS - 1).join('') + ELLIPSIS;
}

/**
 * The field as violations are grouped: every array index becomes `[]` (`properties.items.5371.sku`
 * → `properties.items[].sku`), and the whole is a bounded name. A property whose name is all digits
 * is grouped the same way: the digits are as sender-chosen as an index.
 */
export function normalisedField(field: string): string {
  if (field === '') return field;
  const grouped = field
    .split('.')
    .reduce((out, segment, i) => (/^\d+$/.test(segment) ? `${out}[]` : i === 0 ? segment : `${out}.${segment}`), '');
  return boundedName(grouped);
}

/**
 * A message's violations as they are counted, stored and forwarded: fields normalised, one per
 * (field, violation type) with its first description, at most MAX_VIOLATIONS_PER_MESSAGE. Past the
 * bound the last one kept is a summary (`Other` at `(more)`) naming how many were left out.
 */
export function boundViolations(violations: readonly Violation[]): Violation[] {
  const distinct: Violation[] = [];
  const seen = new Set<string>();
  for (const violation of violations) {
    const field = normalisedField(violation.field);
    const key = `${violation.violationType} ${field}`;
    if (seen.has(key)) continue;
    seen.add(key);
    distinct.push(field === violation.field ? violation : { ...violation, field, description: boundedDescription(violation, field) });
  }
  if (distinct.length <= MAX_VIOLATIONS_PER_MESSAGE) return distinct;
  const kept = distinct.slice(0, MAX_VIOLATIONS_PER_MESSAGE - 1);
  const left = distinct.length - kept.length;
  const { stage } = distinct[distinct.length - 1];
  return [...kept, { violationType: 'Other', field: MORE_VIOLATIONS_FIELD, description: `${left} more violations of this message, not listed one by one`, stage }];
}

/** A violation's description with its field as normalised (the rule's words after the field kept, bounded). */
function boundedDescription(violation: Violation, field: string): string {
  const rest = violation.description.startsWith(violation.field) ? violation.description.slice(violation.field.length) : ` ${violation.description}`;
  return `${field}${rest.length > MAX_VIOLATION_NAME_CHARS ? boundedName(rest) : rest}`;
}
