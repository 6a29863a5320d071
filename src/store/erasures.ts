import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { identifierHash, type Keyring } from '../privacy/keyring';
import { chunks } from './chunks';
import { compiledInQuery } from './compiled-in-query';
import type { Tables } from './tables';
import type { Store } from './types';

/** Ids per `IN (...)` list and rows per INSERT. */
const IDS_PER_QUERY = 500;

/**
 * The one-way forms an erased id is looked up by, the first the one it is written in: enough to
 * recognise a message about it, not to read it back from the store. Deterministic, so the lookup
 * can use an index. With keys, the keyed hash (HMAC under the hash key), so a guessed id
 * (an email address, say) cannot be confirmed without the key; the unsalted SHA-256 rows written
 * before keys existed are still looked up, so their erasures keep holding (they cannot be turned
 * into keyed hashes: the ids are not kept). Without keys (PAYLOAD_ENCRYPTION=off), SHA-256 only.
 */
export type ErasedIdHashes = (id: string) => string[];

export function erasedIdHashes(keyring: Keyring | undefined): ErasedIdHashes {
  return keyring ? (id) => [identifierHash(keyring, 'erasedId', id), unkeyedHash(id)] : (id) => [unkeyedHash(id)];
}

/** The form rows had before keys: 64 hex digits, never the `h1_` of a keyed hash. */
function unkeyedHash(id: string): string {
  return createHash('sha256').update(id, 'utf8').digest('hex');
}

/**
 * Of these ids, those a regulation erased at or after `acceptedAt` (ISO 8601): a request accepted
 * before the regulation whose write lands after it must not bring them back. Run inside the
 * request's write transaction, so it is ordered with the regulation's own writes.
 */
export async function erasedSince(db: Kysely<Tables>, hashes: ErasedIdHashes, ids: string[], acceptedAt: string): Promise<Set<string>> {
  const erased = new Set<string>();
  const byHash = new Map([...new Set(ids)].flatMap((id) => hashes(id).map((hash) => [hash, id] as const)));
  for (const part of chunks([...byHash.keys()], IDS_PER_QUERY)) {
    const rows = await db.selectFrom('erased_ids').select('id_hash').where('id_hash', 'in', part).where('erased_at', '>=', acceptedAt).execute();
    for (const { id_hash } of rows) erased.add(byHash.get(id_hash)!);
  }
  return erased;
}

/** Id hash → when it was erased, for those of these hashes that were (the worker's erasure cache reads through this). */
export async function erasedAtEach(db: Kysely<Tables>, idHashes: string[]): Promise<Map<string, string>> {
  const erased = new Map<string, string>();
  for (const part of chunks(idHashes, IDS_PER_QUERY)) {
    const rows = await db.selectFrom('erased_ids').select(['id_hash', 'erased_at']).where('id_hash', 'in', part).execute();
    for (const { id_hash, erased_at } of rows) erased.set(id_hash, erased_at);
  }
  return erased;
}

export function erasureStore(db: Kysely<Tables>, hashes: ErasedIdHashes): Store['erasures'] {
  // Every attempt asks erasedAt: its query is compiled once per id count.
  const erasedAtRows = compiledInQuery(db, (d, ids) => d.selectFrom('erased_ids').select('erased_at').where('id_hash', 'in', ids));
  return {
    async add(ids, at) {
      const rows = [...new Set(ids)].map((id) => ({ id_hash: hashes(id)[0], erased_at: at }));
      for (const part of chunks(rows, IDS_PER_QUERY)) {
        await db
          .insertInto('erased_ids')
          .values(part)
          // A later regulation for the same id moves the line: messages accepted before it are stopped too.
          .onConflict((oc) => oc.column('id_hash').doUpdateSet({ erased_at: (eb) => eb.ref('excluded.erased_at') }))
          .execute();
      }
    },

    async erasedAt(ids) {
      if (ids.length === 0) return undefined;
      const rows = await erasedAtRows(ids.flatMap(hashes));
      return rows.map((r) => r.erased_at).sort().at(-1);
    },

    async erasedAtOf(ids) {
      const unique = [...new Set(ids)];
      const byHash = await erasedAtEach(db, [...new Set(unique.flatMap(hashes))]);
      const latest = new Map<string, string>();
      for (const id of unique) {
        const at = hashes(id)
          .flatMap((hash) => byHash.get(hash) ?? [])
          .sort()
          .at(-1);
        if (at !== undefined) latest.set(id, at);
      }
      return latest;
    },
  };
}
