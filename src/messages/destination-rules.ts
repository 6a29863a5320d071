import { integrationNameOf } from '../delivery/integrations';
import { compileFilter, type CompiledFilter } from '../rules/destination-filters';
import { compileTransformation, type CompiledTransformation } from '../rules/transformations';
import { catalogIdOf } from '../segment/destination-shape';
import type { TransformationRecord } from '../store/transformations';
import type { DestinationFilterRecord, Store } from '../store/types';
import type { PlanDecisions } from './plan-deliveries';
import { BoundedMap } from '../bounded-map';

/** Compiled conditions kept per filter version; past this many the least recently used goes (filters are at most 10 per destination). */
const MAX_COMPILED = 10_000;

/**
 * The rules ingest decides by: each enabled destination's consent as listed, its
 * switched-on filters as saved now, and the source's switched-on transformations (those of the
 * whole source, and those scoped to the destination's catalog entry), one query each per request. A filter's condition is parsed
 * once per saved version (id and updatedAt), not per message; one that no longer compiles (saved
 * by a later version's grammar, or one past a limit added since) is left out and logged, never
 * guessed at; a compile that throws counts as one that does not compile, cached the same way, so
 * one saved filter can never fail ingestion of its source.
 */
export function destinationRulesReader(
  filters: Pick<Store['destinationFilters'], 'listEnabledFor'>,
  warn: (message: string, filterId: string) => void,
  transformations?: Pick<Store['transformations'], 'listEnabledFor'>,
): PlanDecisions['rulesOf'] {
  const compiled = new BoundedMap<string, CompiledFilter | undefined>(MAX_COMPILED);
  const compiledTransformations = new BoundedMap<string, CompiledTransformation | undefined>(MAX_COMPILED);
  const transformationOf = (record: TransformationRecord): CompiledTransformation | undefined => {
    const key = `${record.id}@${record.updatedAt}`;
    if (!compiledTransformations.has(key)) compiledTransformations.set(key, transformationOrSkipped(record, warn));
    return compiledTransformations.get(key);
  };
  const compiledOf = (record: DestinationFilterRecord): CompiledFilter | undefined => {
    const key = `${record.id}@${record.updatedAt}`;
    if (!compiled.has(key)) compiled.set(key, compiledOrSkipped(record, warn));
    return compiled.get(key);
  };
  return async (enabled, sourceId) => {
    const [records, transformationRecords] = await Promise.all([
      filters.listEnabledFor(enabled.map((destination) => destination.id)),
      transformations && sourceId !== undefined ? transformations.listEnabledFor(sourceId) : Promise.resolve([]),
    ]);
    // One source-scoped list for every destination: the decision remembers its outcome per message by it.
    const sourceScoped: CompiledTransformation[] = [];
    const byCatalogId = new Map<string, CompiledTransformation[]>();
    for (const record of transformationRecords) {
      const transformation = transformationOf(record);
      if (!transformation) continue;
      if (record.destinationMetadataId === null) sourceScoped.push(transformation);
      else byCatalogId.set(record.destinationMetadataId, [...(byCatalogId.get(record.destinationMetadataId) ?? []), transformation]);
    }
    const byDestination = new Map<string, CompiledFilter[]>();
    for (const record of records) {
      const filter = compiledOf(record);
      if (!filter) continue;
      if (!byDestination.has(record.destinationId)) byDestination.set(record.destinationId, []);
      byDestination.get(record.destinationId)!.push(filter);
    }
    return new Map(
      enabled.map((destination) => [
        destination.id,
        {
          consent: destination.consent,
          filters: byDestination.get(destination.id) ?? [],
          integrationName: integrationNameOf(destination),
          ...(transformationRecords.length > 0 && { transformations: { source: sourceScoped, destination: byCatalogId.get(catalogIdOf(destination)) ?? [] } }),
        },
      ]),
    );
  };
}

function transformationOrSkipped(record: TransformationRecord, warn: (message: string, id: string) => void): CompiledTransformation | undefined {
  try {
    const result = compileTransformation(record.id, record);
    if (!result.ok) warn(`a saved transformation does not compile and is skipped: ${result.error.field}: ${result.error.message}`, record.id);
    return result.ok ? result.transformation : undefined;
  } catch (error) {
    warn(`a saved transformation does not compile and is skipped: ${(error as Error).message}`, record.id);
    return undefined;
  }
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
