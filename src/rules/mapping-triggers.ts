import { compileProgram } from '../programs/compile-program';
import type { FqlCondition } from './fql';
import { conditionMatches } from './fql-match';

/** A mapping's trigger parsed once, by the same FQL parser and evaluator as destination filters. */
export interface CompiledTrigger {
  name: string;
  condition: FqlCondition;
}

/**
 * A saved trigger that no longer parses (saved by a later grammar, or past a limit added since)
 * matches nothing: never guessed at. A parse that throws is one that does not parse, so a saved
 * trigger can never fail ingestion.
 */
export function compileTrigger(mapping: { name: string; trigger: string }): CompiledTrigger | undefined {
  // The boundary for user programs answers every source as a value: it never throws.
  const parsed = compileProgram('fql', mapping.trigger);
  return parsed.ok ? { name: mapping.name, condition: parsed.program } : undefined;
}

/** The names of the mappings whose trigger this message meets, in saved order. */
export function matchedMappings(message: Record<string, unknown>, triggers: readonly CompiledTrigger[]): string[] {
  return triggers.filter((trigger) => conditionMatches(trigger.condition, message)).map((trigger) => trigger.name);
}
