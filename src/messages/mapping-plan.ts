import { compileTrigger, matchedMappings, type CompiledTrigger } from '../rules/mapping-triggers';
import type { EnabledDestination } from '../store/types';
import type { MessageBody } from '../delivery/types';
import { BoundedMap } from '../bounded-map';

/** What the triggers read of an outgoing message (plan-deliveries.ts Outgoing). */
type Triggerable = { body?: MessageBody; mappings?: Record<string, string[]> };

/** Compiled triggers kept per trigger text; past this many the least recently used goes. */
const MAX_COMPILED = 10_000;
const compiled = new BoundedMap<string, CompiledTrigger['condition'] | undefined>(MAX_COMPILED);

function compiledTrigger(mapping: { name: string; trigger: string }): CompiledTrigger | undefined {
  if (!compiled.has(mapping.trigger)) compiled.set(mapping.trigger, compileTrigger(mapping)?.condition);
  const condition = compiled.get(mapping.trigger);
  return condition && { name: mapping.name, condition };
}

/** The planner's view of the source's actions destinations and their enabled mappings' triggers. */
export interface DestinationTriggers {
  has(destinationId: string): boolean;
  /** What the decision reads for this destination: its compiled triggers, or nothing for a `webhooks` destination. */
  of(destinationId: string): { mappings?: CompiledTrigger[] };
  /**
   * A message the rules do not decide (delete notifications, Personas syncs, redeliveries) still
   * goes to an actions destination only through mappings whose trigger it meets: evaluated on its
   * body in the clear, or the mappings a redelivery recorded; a sealed body without either goes
   * through every enabled mapping (nothing here may open it).
   */
  decideUnruled<M extends Triggerable>(message: M, destinationIds: string[]): M & { destinationIds: string[] };
}

export function triggersOf(enabled: EnabledDestination[]): DestinationTriggers {
  const byId = new Map<string, { all: string[]; triggers: CompiledTrigger[] }>();
  for (const destination of enabled) {
    if (!destination.mappings) continue;
    const triggers = destination.mappings.map(compiledTrigger).filter((trigger): trigger is CompiledTrigger => trigger !== undefined);
    byId.set(destination.id, { all: destination.mappings.map((mapping) => mapping.name), triggers });
  }
  return {
    has: (id) => byId.has(id),
    of: (id) => (byId.has(id) ? { mappings: byId.get(id)!.triggers } : {}),
    decideUnruled(message, destinationIds) {
      if (byId.size === 0) return { ...message, destinationIds };
      const mappings: Record<string, string[]> = {};
      const ids = destinationIds.filter((id) => {
        const actions = byId.get(id);
        if (!actions) return true;
        const names = message.mappings?.[id] ?? (message.body ? matchedMappings(message.body, actions.triggers) : actions.all);
        if (names.length > 0) mappings[id] = names;
        return names.length > 0;
      });
      return { ...message, destinationIds: ids, ...(Object.keys(mappings).length > 0 ? { mappings } : {}) };
    },
  };
}
