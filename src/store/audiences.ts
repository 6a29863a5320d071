import type { Kysely } from 'kysely';
import type { Condition } from '../personas/types';
import { computationStore } from './computations';
import type { ComputationStore } from './personas-types';
import type { Tables } from './tables';

/** Audiences: a condition tree over profiles, synced as a boolean trait (seed, Personas rules). */
export function audienceStore(db: Kysely<Tables>): ComputationStore<Condition> {
  return computationStore<Condition>(db, 'audience');
}
