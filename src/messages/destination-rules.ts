import { integrationNameOf } from '../delivery/integrations';
import { compileFilter, type CompiledFilter } from '../rules/destination-filters';
import type { DestinationFilterRecord, Store } from '../store/types';
import type { PlanDecisions } from './plan-deliveries';
import { BoundedMap } from '../bounded-map';

/** Compiled conditions kept per filter version; past this many the least recently used goes (filters are at most 10 per destination). */
const MAX_COMPILED = 10_000;

/**
 * The rules ingest decides by: each enabled destination's consent as listed, and its
 * switched-on filters as saved now, read in one query per request. A filter's condition is parsed
 * once per saved version (id and updatedAt), not per message; one that no longer compiles (saved
 * by a later version's grammar, or one past a limit added since) is left out and logged, never
 * guessed at; a compile that throws counts as one that does not compile, cached the same way, so
 * one saved filter can never fail ingestion of its source.
 */
export function destinationRulesReader(filters: Pick<Store['destinationFilters'], 'listEnabledFor'>, warn: (message: string, filterId: string) => void): PlanDecisions['rulesOf'] {
  const compiled = new BoundedMap<string, CompiledFilter | undefined>(MAX_COMPILED);
  const compiledOf = (record: DestinationFilterRecord): CompiledFilter | undefined => {
    const key = `${record.id}@${record.updatedAt}`;
    if (!compiled.has(key)) compiled.set(key, compiledOrSkipped(record, warn));
    return compiled.get(key);
  };
  return async (enabled) => {
    const records = await filters.listEnabledFor(enabled.map((destination) => destination.id));
    const byDestination = new Map<string, CompiledFilter[]>();
    for (const record of records) {
      const filter = compiledOf(record);
      if (!filter) continue;
      if (!byDestination.has(record.destinationId)) byDestination.set(record.destinationId, []);
      byDestination.get(record.destinationId)!.push(filter);
    }
    return new Map(enabled.map((destination) => [destination.id, { consent: destination.consent, filters: byDestination.get(destination.id) ?? [], integrationName: integrationNameOf(destination) }]));
  };
}

function compiledOrSkipped(record: DestinationFilterRecord, warn: (message: string, filterId: string) => void): CompiledFilter | undefined {
  try {
    const result = compileFilter(record.id, record);
    if (!result.ok) warn(`a saved filter does not compile and is skipped: ${result.error.field}: ${result.error.message}`, record.id);
    return result.ok ? result.filter : undefined;
  } catch (error) {
    warn(`a saved filter does not compile and is skipped: ${(error as Error).message}`, record.id);
    return undefined;
  }
}
