import type { Kysely } from 'kysely';
import { isSuppressed, type Suppression } from '../delivery/suppression';
import { chunks } from './chunks';
import { compiledInQuery } from './compiled-in-query';
import type { ErasedIdHashes } from './erasures';
import type { Tables } from './tables';
import type { Store } from './types';

/** Ids per `IN (...)` list and rows per INSERT. */
const IDS_PER_QUERY = 500;

/**
 * Ids suppressed by regulations, kept like erased ids: by their one-way hashes only
 * (erasures.ts), written in the first form and looked up by every form. A suppression is global,
 * as regulations are: every source, every destination.
 */
const suppressionRows = (db: Kysely<Tables>, part: string[]) => db.selectFrom('suppressed_ids').select(['id_hash', 'suppressed_at', 'lifted_at']).where('id_hash', 'in', part);
// Every attempt asks this: its compiled forms are kept per database.
const readers = new WeakMap<Kysely<Tables>, ReturnType<typeof compiledInQuery<{ id_hash: string; suppressed_at: string; lifted_at: string | null }>>>();

export async function suppressionsByHash(db: Kysely<Tables>, idHashes: string[]): Promise<Map<string, Suppression>> {
  const found = new Map<string, Suppression>();
  let read = readers.get(db);
  if (!read) readers.set(db, (read = compiledInQuery(db, suppressionRows)));
  for (const part of chunks(idHashes, IDS_PER_QUERY)) {
    const rows = await read(part);
    for (const row of rows) found.set(row.id_hash, { suppressedAt: row.suppressed_at, ...(row.lifted_at !== null && { liftedAt: row.lifted_at }) });
  }
  return found;
}

export function suppressionStore(db: Kysely<Tables>, hashes: ErasedIdHashes): Store['suppressions'] {
  return {
    async add(ids, at) {
      const rows = [...new Set(ids)].map((id) => ({ id_hash: hashes(id)[0], suppressed_at: at, lifted_at: null }));
      for (const part of chunks(rows, IDS_PER_QUERY)) {
        await db
          .insertInto('suppressed_ids')
          .values(part)
          // Suppressed again after an UNSUPPRESS: a new suppression from now, not lifted.
          .onConflict((oc) => oc.column('id_hash').doUpdateSet({ suppressed_at: (eb) => eb.ref('excluded.suppressed_at'), lifted_at: null }))
          .execute();
      }
    },

    async lift(ids, at) {
      // Every form: a row written before keys existed is lifted too.
      for (const part of chunks([...new Set(ids)].flatMap(hashes), IDS_PER_QUERY)) {
        await db.updateTable('suppressed_ids').set({ lifted_at: at }).where('id_hash', 'in', part).where('lifted_at', 'is', null).execute();
      }
    },

    async of(ids) {
      return [...(await suppressionsByHash(db, [...new Set(ids.flatMap(hashes))])).values()];
    },

    async ofEach(ids) {
      const unique = [...new Set(ids)];
      const byHash = await suppressionsByHash(db, [...new Set(unique.flatMap(hashes))]);
      return new Map(unique.map((id) => [id, hashes(id).flatMap((hash) => byHash.get(hash) ?? [])] as const).filter(([, found]) => found.length > 0));
    },

    async suppressedAmong(ids) {
      if (ids.length === 0) return new Set();
      const unique = [...new Set(ids)];
      const byHash = await suppressionsByHash(db, unique.flatMap(hashes));
      return new Set(unique.filter((id) => isSuppressed(hashes(id).flatMap((hash) => byHash.get(hash) ?? []))));
    },
  };
}
