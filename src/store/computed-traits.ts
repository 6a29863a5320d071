import type { Kysely } from 'kysely';
import type { ComputedTraitDefinition } from '../personas/types';
import { computationStore } from './computations';
import type { ComputationStore } from './personas-types';
import type { Tables } from './tables';

/** Computed traits: an aggregate of a profile's events, synced when its value changes. */
export function computedTraitStore(db: Kysely<Tables>): ComputationStore<ComputedTraitDefinition> {
  return computationStore<ComputedTraitDefinition>(db, 'computed_trait');
}
