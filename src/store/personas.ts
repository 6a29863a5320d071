import type { Kysely } from 'kysely';
import { audienceStore } from './audiences';
import { computedTraitStore } from './computed-traits';
import { personasSyncStore } from './personas-snapshots';
import type { PersonasTables } from './personas-tables';
import type { PersonasStore } from './personas-types';
import type { ErasedIdHashes } from './erasures';
import { profileStore } from './profiles';
import type { Tables } from './tables';

/** Profiles, audiences, computed traits and their sync state, over the settings store's database. */
export function personasStore(db: Kysely<Tables>, erasedIdHashes: ErasedIdHashes): PersonasStore {
  const personas = db.withTables<PersonasTables>();
  return {
    profiles: profileStore(db, erasedIdHashes),
    audiences: audienceStore(db),
    computedTraits: computedTraitStore(db),
    sync: personasSyncStore(db),
    async keyOwner(sourceId, key) {
      const audience = await personas.selectFrom('audiences').select('id').where('source_id', '=', sourceId).where('key', '=', key).executeTakeFirst();
      if (audience) return { kind: 'audience', id: audience.id };
      const trait = await personas.selectFrom('computed_traits').select('id').where('source_id', '=', sourceId).where('key', '=', key).executeTakeFirst();
      return trait ? { kind: 'computed_trait', id: trait.id } : undefined;
    },
  };
}
