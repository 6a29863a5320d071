import { transformMapping } from './mapping-kit';
import { mappingPathViolation } from './mapping-paths';
import type { ActionsMapping } from './types';

/**
 * A mapping's body for one event, rendered by Segment's own mapping kit
 * (`@segment/actions-core`), so `@path`, `@template`, `@if`, `@arrayPath`, … mean exactly what
 * Segment documents. Called only by the attempt activity (on the opened event, so no rendered body
 * lands in history) and the admin preview; workflow code never imports it.
 */
export type Rendered = { ok: true; body: string } | { ok: false; reason: string };

export function renderMappingBody(mapping: Pick<ActionsMapping, 'name' | 'settings'>, event: Record<string, unknown>): Rendered {
  // A mapping saved before paths were checked never hands the kit a path into a prototype.
  const unsafe = mappingPathViolation(mapping.settings.data);
  if (unsafe) return { ok: false, reason: `mapping ${JSON.stringify(mapping.name)} cannot render: ${unsafe.at} ${unsafe.rule}` };
  try {
    const data = transformMapping(mapping.settings.data, event);
    return { ok: true, body: JSON.stringify(data) };
  } catch (err) {
    // The kit's messages name the directive and the types, never the event's values.
    return { ok: false, reason: `mapping ${JSON.stringify(mapping.name)} could not render this message: ${(err as Error).message}` };
  }
}
