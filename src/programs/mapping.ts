import { validateMapping } from '../mappings/mapping-kit';
import { mappingPathViolation } from '../mappings/mapping-paths';

/**
 * Mapping directives, Segment's mapping-kit language (`@path`, `@template`, `@if`, `@liquid`…),
 * as the boundary checks them at save: paths and nesting first (mapping-paths.ts: the kit's
 * validator recurses, and its `get` walks inherited properties), then the kit's own validator, so
 * a mapping Segment saves, Switchyard saves. Liquid templates run in the kit's own engine, with its
 * limits (bounds.ts MAPPING_BOUNDS).
 */

/** The messages of a mapping-kit validation failure (an AggregateError of ValidationErrors), first lines only. */
function validationMessages(err: unknown): string[] {
  const each = err && typeof err === 'object' && Symbol.iterator in err ? [...(err as Iterable<unknown>)] : [err];
  return each.map((e) => (e instanceof Error ? e.message : String(e)).trim().split('\n')[0].replace(/^ValidationError: /, ''));
}

/** Why this `data` mapping cannot be saved (Segment's words: `/who has an invalid directive: @nonsense.`), if it cannot. */
export function mappingDataRule(data: unknown): string | undefined {
  // Paths and nesting first: the kit's validator recurses and its `get` walks inherited properties.
  const unsafe = mappingPathViolation(data);
  if (unsafe) return `${unsafe.at} ${unsafe.rule}`;
  try {
    validateMapping(data);
    return undefined;
  } catch (err) {
    return validationMessages(err).join('; ');
  }
}

