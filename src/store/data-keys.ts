import type { Kysely } from 'kysely';
import { newDataKey, unwrapDataKey, wrapDataKey } from '../privacy/data-key-wrap';
import type { Keyring } from '../privacy/keyring';
import { OpenedValues } from '../privacy/opened-values';
import { chunks } from './chunks';
import { compiledInQuery } from './compiled-in-query';
import { countsByMasterKey } from './master-key-counts';
import type { Tables } from './tables';
import type { Store } from './types';

/** Subjects per `IN (...)` list and rows per INSERT. */
const PER_QUERY = 500;

/** Unwrapped data keys kept per store (32 bytes each and their wrapped text): about the users active in a few minutes. */
export const OPENED_KEYS = 10_000;

/**
 * Crypto-shredding's keys: one random data key per subject (the keyed hash of a userId,
 * or of an anonymousId not yet linked to one), stored wrapped under a master key. Destroying a row
 * makes every body sealed under it unreadable wherever its copies are. Without a keyring
 * (PAYLOAD_ENCRYPTION=off) there is nothing to wrap with: every call fails, and callers seal nothing.
 */
export function dataKeyStore(db: Kysely<Tables>, keyring: Keyring | undefined, opened = new OpenedValues<Buffer>(OPENED_KEYS)): Store['dataKeys'] {
  const ring = () => {
    if (!keyring) throw new Error('data keys need payload keys (PAYLOAD_KEYS); PAYLOAD_ENCRYPTION=off seals nothing');
    return keyring;
  };

  // Every read still asks the table (a destroyed key is gone at once); only the unwrap of a row
  // read unchanged before is skipped: every attempt and every request reads its users' keys again.
  // `opened` is the store's (openStore): a destroy NOTIFYd by another process forgets there too.
  const keyRows = compiledInQuery(db, (d, hashes) => d.selectFrom('data_keys').select(['subject_hash', 'master_key_id', 'wrapped_key']).where('subject_hash', 'in', hashes));
  async function read(subjectHashes: string[]): Promise<Map<string, Buffer>> {
    const keys = new Map<string, Buffer>();
    for (const part of chunks([...new Set(subjectHashes)], PER_QUERY)) {
      const rows = await keyRows(part);
      for (const row of rows) {
        const unwrap = () => unwrapDataKey(ring(), row.subject_hash, { masterKeyId: row.master_key_id, wrapped: Buffer.from(row.wrapped_key, 'base64') });
        keys.set(row.subject_hash, opened.open(row.subject_hash, `${row.master_key_id}\0${row.wrapped_key}`, unwrap));
      }
    }
    return keys;
  }

  return {
    async getOrCreate(subjectHashes) {
      const keyring = ring();
      // Read first: once a user has a key (the usual case) this is one read and no write, which
      // matters on SQLite, where every write transaction takes the file's one writer lock.
      const keys = await read(subjectHashes);
      const missing = [...new Set(subjectHashes)].filter((subject) => !keys.has(subject));
      if (missing.length === 0) return keys;
      const now = new Date().toISOString();
      const rows = missing.map((subject_hash) => {
        const { masterKeyId, wrapped } = wrapDataKey(keyring, subject_hash, newDataKey());
        return { subject_hash, master_key_id: masterKeyId, wrapped_key: wrapped.toString('base64'), created_at: now };
      });
      // Insert-if-absent, then read: two processes creating one subject's key at once both end up
      // with the row that won, never with two keys for one subject.
      for (const part of chunks(rows, PER_QUERY)) await db.insertInto('data_keys').values(part).onConflict((oc) => oc.column('subject_hash').doNothing()).execute();
      for (const [subject, key] of await read(missing)) keys.set(subject, key);
      return keys;
    },

    async get(subjectHash) {
      return (await read([subjectHash])).get(subjectHash);
    },

    getMany: read,

    async rewrap(limit) {
      const keyring = ring();
      const rows = await db
        .selectFrom('data_keys')
        .select(['subject_hash', 'master_key_id', 'wrapped_key'])
        .where('master_key_id', '<>', keyring.activeKeyId)
        .orderBy('subject_hash')
        .limit(limit)
        .execute();
      let rewrapped = 0;
      for (const row of rows) {
        const dataKey = unwrapDataKey(keyring, row.subject_hash, { masterKeyId: row.master_key_id, wrapped: Buffer.from(row.wrapped_key, 'base64') });
        const { masterKeyId, wrapped } = wrapDataKey(keyring, row.subject_hash, dataKey);
        // Only the row as read: a regulation that destroyed it meanwhile stays done (no row comes back).
        const result = await db
          .updateTable('data_keys')
          .set({ master_key_id: masterKeyId, wrapped_key: wrapped.toString('base64') })
          .where('subject_hash', '=', row.subject_hash)
          .where('master_key_id', '=', row.master_key_id)
          .where('wrapped_key', '=', row.wrapped_key)
          .executeTakeFirst();
        rewrapped += Number(result.numUpdatedRows);
      }
      // A row another process re-wrapped (or a regulation destroyed) first counts for none here.
      return { rewrapped, left: rows.length > 0 };
    },

    countByMasterKey: () => countsByMasterKey(db, 'data_keys', 'master_key_id'),

    async destroy(subjectHashes) {
      opened.forget(subjectHashes);
      let destroyed = 0;
      for (const part of chunks([...new Set(subjectHashes)], PER_QUERY)) {
        const result = await db.deleteFrom('data_keys').where('subject_hash', 'in', part).executeTakeFirst();
        destroyed += Number(result.numDeletedRows);
      }
      return destroyed;
    },
  };
}
