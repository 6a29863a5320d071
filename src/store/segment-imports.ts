import type { Kysely } from 'kysely';
import type { Tables } from './tables';
import type { Store } from './types';

/**
 * What a Segment workspace import made (src/segment/import-apply.ts): per Segment object, the
 * Switchyard object it became and a fingerprint of the definition it was made from. A second import
 * finds each object by its Segment id and, when the definition is the same, writes nothing.
 */
export function segmentImportStore(db: Kysely<Tables>): Store['segmentImports'] {
  return {
    async find(kind, segmentId) {
      const row = await db.selectFrom('segment_imports').selectAll().where('kind', '=', kind).where('segment_id', '=', segmentId).executeTakeFirst();
      return row && { switchyardId: row.switchyard_id, fingerprint: row.fingerprint };
    },
    async record(kind, segmentId, switchyardId, fingerprint) {
      const importedAt = new Date().toISOString();
      await db
        .insertInto('segment_imports')
        .values({ kind, segment_id: segmentId, switchyard_id: switchyardId, fingerprint, imported_at: importedAt })
        .onConflict((c) => c.columns(['kind', 'segment_id']).doUpdateSet({ switchyard_id: switchyardId, fingerprint, imported_at: importedAt }))
        .execute();
    },
  };
}
