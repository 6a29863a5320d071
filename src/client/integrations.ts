import type { Integrations } from './types';

/**
 * Seed, "Selecting destinations (library)": keys are destination names, compared case-sensitively;
 * every destination is on by default; `All: false` turns off every destination not set `true`.
 * An object value carries destination-specific options and counts as on (as Segment's API does).
 */
export function isDestinationEnabled(integrations: Integrations | undefined, destination: string): boolean {
  if (!integrations) return true;
  const own = integrations[destination];
  if (own !== undefined) return own !== false;
  return integrations.All !== false;
}

/**
 * The rule a value breaks, or undefined. Strings are refused because `{ Webhooks: 'false' }` reads
 * as off to a person but as on to every server.
 */
export function integrationsProblem(value: unknown): { key?: string; rule: string } | undefined {
  if (!isPlainObject(value)) return { rule: 'must be an object of destination names to true, false or an options object' };
  for (const [key, setting] of Object.entries(value)) {
    if (setting === undefined || typeof setting === 'boolean') continue;
    if (key !== 'All' && isPlainObject(setting)) continue;
    return { key, rule: key === 'All' ? 'must be true or false' : 'must be true, false or an options object' };
  }
  return undefined;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
