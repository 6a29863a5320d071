/**
 * RFC 7396 JSON Merge Patch: how an identify's traits update a profile's (seed, Personas rule 1).
 * A key set to null is removed, a nested object merges into the one it replaces, anything else
 * (arrays too) replaces the old value. Keys keep their place; new keys come after them.
 *
 * In TypeScript rather than SQL so SQLite (`json_patch`) and PostgreSQL (which has no merge patch:
 * jsonb `||` is shallow and keeps nulls) store the same traits text: the store reads the profile,
 * patches it here and writes it back inside its write transaction.
 */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

const isObject = (value: unknown): value is Record<string, JsonValue> => typeof value === 'object' && value !== null && !Array.isArray(value);

export function mergePatch(target: unknown, patch: unknown): JsonValue {
  if (!isObject(patch)) return patch as JsonValue;
  // A Map, not property assignment: a trait named "__proto__" is a key like any other.
  const merged = new Map<string, JsonValue>(isObject(target) ? Object.entries(target) : []);
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) merged.delete(key);
    else merged.set(key, mergePatch(merged.get(key), value));
  }
  return Object.fromEntries(merged);
}
