/**
 * The one walker for every path a user supplies — filter `fields` keys and the
 * names listed under them, `SAMPLE.path`, FQL field references (filters, mapping and replay
 * triggers), mapping `@path`s. It steps into OWN properties only (`Object.hasOwn`, as JSON
 * Pointer, RFC 6901, would), and a path with a `__proto__`, `constructor` or `prototype` segment
 * is refused where it is saved or previewed, so no user string reaches a prototype: tsub's `dlv`
 * and actions-core's `get` walk inherited properties, and `"constructor.prototype"` once let a
 * DROP_PROPERTIES delete `Object.prototype.hasOwnProperty` process-wide.
 * Pure: no I/O, importable anywhere.
 */

/** The segments that lead from a plain JSON value to a built-in prototype or constructor. */
export const FORBIDDEN_SEGMENTS: readonly string[] = ['__proto__', 'constructor', 'prototype'];

/** The first forbidden segment of a path (dotted, or one name per segment), if any. */
export function forbiddenSegment(path: string | readonly string[]): string | undefined {
  const segments = typeof path === 'string' ? path.split('.') : path;
  return segments.find((segment) => FORBIDDEN_SEGMENTS.includes(segment));
}

/**
 * Why a user's path cannot be used, in the words a 400 reads after its field
 * (`key "constructor.prototype" has a forbidden segment "constructor"`), or undefined.
 */
export function pathRule(path: string | readonly string[], what = 'key', shown = typeof path === 'string' ? path : path.join('.')): string | undefined {
  const segment = forbiddenSegment(path);
  if (segment === undefined) return undefined;
  return `${what} ${JSON.stringify(shown)} has a forbidden segment ${JSON.stringify(segment)} (__proto__, constructor and prototype are never fields of a message)`;
}

/** The value at a path (one name per segment, or dotted), read over own properties only; undefined when any step is missing. */
export function ownValueAt(value: unknown, path: string | readonly string[]): unknown {
  let at = value;
  for (const key of typeof path === 'string' ? path.split('.') : path) {
    if (at === null || typeof at !== 'object' || !Object.hasOwn(at, key)) return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

/** The objects a filter's `fields` key names: the value at the path ("" is the message itself), or each object of an array there (Segment FAQ: `properties.products`). */
function objectsAt(body: Record<string, unknown>, key: string): Record<string, unknown>[] {
  if (forbiddenSegment(key) !== undefined) return [];
  const found = key === '' ? body : ownValueAt(body, key);
  const candidates = Array.isArray(found) ? (found as unknown[]) : [found];
  return candidates.filter((candidate): candidate is Record<string, unknown> => candidate !== null && typeof candidate === 'object');
}

/**
 * DROP_PROPERTIES as tsub's `drop_properties` does it (each key's object, or each object of an
 * array there, loses the listed names), but over own properties: a forbidden segment reaches
 * nothing even if a caller skipped validation. Mutates `body`, which the caller owns.
 */
export function dropOwnProperties(body: Record<string, unknown>, fields: Record<string, readonly string[]>): void {
  for (const [key, names] of Object.entries(fields)) {
    for (const target of objectsAt(body, key)) {
      for (const name of names) if (Object.hasOwn(target, name)) delete target[name];
    }
  }
}

/** ALLOW_PROPERTIES as tsub's `allow_properties`: each key's object keeps only the listed own names. */
export function allowOwnProperties(body: Record<string, unknown>, fields: Record<string, readonly string[]>): void {
  for (const [key, names] of Object.entries(fields)) {
    for (const target of objectsAt(body, key)) {
      for (const name of Object.keys(target)) if (!names.includes(name)) delete target[name];
    }
  }
}
