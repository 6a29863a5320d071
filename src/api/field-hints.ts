import leven from 'leven';

/**
 * Errors that teach. A 400 keeps naming the field and the rule; these add the fix when it
 * is clear: the known field nearest to an unknown one (`consent.category` → `categories`), and an
 * example of a format (`2026-11-28T10:00:00Z` for a date-time).
 */

/** Examples of the string formats the API's schemas use, as a person would type them. */
export const FORMAT_EXAMPLES: Record<string, string> = {
  'date-time': '2026-11-28T10:00:00Z',
  date: '2026-11-28',
  uri: 'https://example.com/hook',
  email: 'ada@example.com',
};

/**
 * The known field an unknown one most likely meant, case aside: within a few edits (more for
 * longer names); none when two are equally near, so a hint is never a guess between two.
 */
export function nearestField(unknown: string, known: readonly string[]): string | undefined {
  const lower = unknown.toLowerCase();
  const scored = known.map((name) => ({ name, distance: leven(lower, name.toLowerCase()) }));
  // One edit for short names, where two would reach almost anything; three for long ones (`category` → `categories`).
  const allowed = unknown.length <= 4 ? 1 : unknown.length <= 7 ? 2 : 3;
  const near = scored.filter(({ distance }) => distance <= allowed).sort((a, b) => a.distance - b.distance);
  if (near.length === 0) return undefined;
  if (near.length > 1 && near[0].distance === near[1].distance) return undefined;
  return near[0].name;
}

/**
 * The properties an object schema declares, found by Ajv's `schemaPath` of an error at that object
 * (`#/properties/consent/additionalProperties` → the schema at `#/properties/consent`).
 */
export function knownProperties(schema: unknown, schemaPath: string): string[] {
  const segments = schemaPath.replace(/^#\/?/, '').split('/').filter(Boolean).map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
  segments.pop();
  let at: unknown = schema;
  for (const segment of segments) {
    if (at === null || typeof at !== 'object' || !Object.hasOwn(at, segment)) return [];
    at = (at as Record<string, unknown>)[segment];
  }
  const properties = at !== null && typeof at === 'object' ? (at as { properties?: unknown }).properties : undefined;
  return properties !== null && typeof properties === 'object' ? Object.keys(properties) : [];
}

interface ConstError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
}

/**
 * A field a schema allows as one of several literals (a union of constants, as TypeBox writes an
 * enum of strings): Ajv reports each branch on its own, `must be equal to constant`, which tells
 * nobody what to send. This lists what the field may be instead: `must be one of a, b, c`.
 */
export function allowedConstantsRule(errors: readonly ConstError[]): string | undefined {
  const first = errors[0];
  if (first?.keyword !== 'const') return undefined;
  const here = errors.filter((e) => e.instancePath === first.instancePath);
  // A union with a branch of another kind (a literal or null) is not a list of values: say nothing more.
  if (here.some((e) => e.keyword !== 'const' && e.keyword !== 'anyOf')) return undefined;
  const allowed = here.filter((e) => e.keyword === 'const').map((e) => e.params.allowedValue);
  return `must be one of ${allowed.map((value) => (typeof value === 'string' ? value : JSON.stringify(value))).join(', ')}`;
}
