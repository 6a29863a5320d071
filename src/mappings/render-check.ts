import { typesTriggerCanMatch } from '../rules/trigger-types';
import type { FqlCondition } from '../rules/fql';
import { transformMapping } from './mapping-kit';
import { syntheticEvent } from './synthetic-events';

/**
 * A mapping the kit's validator passes can still fail on every message
 * (`"@if": {"exist": …}` validates, then throws `@if requires an "exists" key…` at each render).
 * So before a mapping is saved its data is rendered against a synthetic message of each type its
 * trigger can match; the first failure names the field (a JSON pointer into `data`), the directive
 * and the kit's own message. Called only after the validator and the path checks passed, so the
 * data nests at most 8 directives deep.
 */
export function renderFailure(data: Record<string, unknown>, trigger: FqlCondition): string | undefined {
  for (const type of typesTriggerCanMatch(trigger)) {
    const event = syntheticEvent(type);
    const failure = renderError(data, event);
    if (failure === undefined) continue;
    const spot = failingSpot(data, event, '') ?? { pointer: '', directive: Object.keys(data).find(isDirective) ?? 'mapping' };
    return `${spot.pointer || '/'}: ${spot.directive} cannot render the synthetic ${type} message (a type its trigger can match): ${failure}`;
  }
  return undefined;
}

const isDirective = (key: string) => key.startsWith('@');
const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

function renderError(data: Record<string, unknown>, event: Record<string, unknown>): string | undefined {
  try {
    transformMapping(data, event);
    return undefined;
  } catch (err) {
    // The kit's messages name the directive and the types, never a value of the event.
    return err instanceof Error ? err.message : String(err);
  }
}

/** The innermost directive that fails on its own, and where it is: so the 400 names the field, not just the mapping. */
function failingSpot(value: unknown, event: Record<string, unknown>, pointer: string): { pointer: string; directive: string } | undefined {
  if (Array.isArray(value)) {
    for (const [index, element] of value.entries()) {
      const spot = failingSpot(element, event, `${pointer}/${index}`);
      if (spot) return spot;
    }
    return undefined;
  }
  if (!isObject(value)) return undefined;
  const directive = Object.keys(value).find(isDirective);
  for (const [key, child] of Object.entries(value)) {
    const spot = failingSpot(child, event, directive ? pointer : `${pointer}/${key}`);
    if (spot) return spot;
  }
  if (directive && renderError({ value }, event) !== undefined) return { pointer, directive };
  return undefined;
}
