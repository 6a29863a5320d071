import { sql, type Kysely } from 'kysely';
import type { Keyring } from '../privacy/keyring';
import { openedCredentials, sealedCredentials, type CredentialColumns } from './destination-credentials';
import { openedSourceFunctionSettings, SEALED_MARK, storedSourceFunctionSettings } from './source-function-settings';
import { dialectOf } from './dialect';
import { countsByMasterKey } from './master-key-counts';
import type { Tables } from './tables';

/** Rows per read while sealing at open. */
const BATCH = 500;

type Which = 'plaintext' | 'not under the active key';

async function rowsToSeal(db: Kysely<Tables>, keyring: Keyring, which: Which, afterId: string, limit: number) {
  let query = db.selectFrom('destinations').select(['id', 'shared_secret', 'signing_secret', 'previous_signing_secret', 'webhooks', 'mappings', 'auth', 'tls', 'function_settings', 'insert_function_settings', 'credentials_key_id']).where('id', '>', afterId).orderBy('id').limit(limit);
  query = which === 'plaintext' ? query.where('credentials_key_id', 'is', null) : query.where((eb) => eb.or([eb('credentials_key_id', 'is', null), eb('credentials_key_id', '<>', keyring.activeKeyId)]));
  return query.execute();
}

/**
 * Seals these rows' credentials again under the active key. Each row is rewritten only as it was
 * read: an admin write meanwhile (sealed anew by its process) stays as written. Resolves how many.
 */
async function reseal(db: Kysely<Tables>, keyring: Keyring, rows: (CredentialColumns & { id: string })[]): Promise<number> {
  let resealed = 0;
  for (const row of rows) {
    const sealed = sealedCredentials(keyring, row.id, openedCredentials(keyring, row));
    const result = await db
      .updateTable('destinations')
      .set(sealed)
      .where('id', '=', row.id)
      .where((eb) => eb.and((Object.keys(sealed) as (keyof CredentialColumns)[]).map((column) => (row[column] == null ? eb(column, 'is', null) : eb(column, '=', row[column])))))
      .executeTakeFirst();
    resealed += Number(result.numUpdatedRows);
  }
  return resealed;
}

/**
 * Source functions' settings written in plaintext (or, after a rotation, under another key) sealed
 * again under the active key, each row only as it was read. Resolves how many, and whether `limit` was reached.
 */
async function resealSourceSettings(db: Kysely<Tables>, keyring: Keyring, which: Which, limit: number): Promise<{ resealed: number; found: number; full: boolean }> {
  const unsealed = which === 'plaintext' ? `${SEALED_MARK}%` : `${SEALED_MARK}${keyring.activeKeyId}:%`;
  const rows = await db.selectFrom('sources').select(['id', 'function_settings']).where('function_settings', 'is not', null).where('function_settings', 'not like', unsealed).orderBy('id').limit(limit).execute();
  let resealed = 0;
  for (const row of rows) {
    const sealed = storedSourceFunctionSettings(keyring, row.id, openedSourceFunctionSettings(keyring, row.id, row.function_settings));
    const result = await db.updateTable('sources').set({ function_settings: sealed }).where('id', '=', row.id).where('function_settings', '=', row.function_settings!).executeTakeFirst();
    resealed += Number(result.numUpdatedRows);
  }
  return { resealed, found: rows.length, full: rows.length === limit };
}

/**
 * Seals the credentials of rows written in plaintext — by a version before credentials were sealed at rest, or by a
 * process with PAYLOAD_ENCRYPTION=off — when a process with keys opens the store: the migration
 * that "encrypts existing rows" (a kysely migration has no keys). Safe when several processes open
 * the store at once. On SQLite the WAL is then checkpointed and truncated, so the plaintext pages
 * do not linger in `-wal` (the file itself runs with secure_delete). Resolves how many it sealed.
 */
export async function sealPlaintextCredentials(db: Kysely<Tables>, keyring: Keyring): Promise<number> {
  let sealed = 0;
  for (let afterId = ''; ;) {
    const rows = await rowsToSeal(db, keyring, 'plaintext', afterId, BATCH);
    if (rows.length === 0) break;
    sealed += await reseal(db, keyring, rows);
    afterId = rows[rows.length - 1].id;
  }
  for (let full = true; full; ) {
    const pass = await resealSourceSettings(db, keyring, 'plaintext', BATCH);
    sealed += pass.resealed;
    full = pass.full;
  }
  if (sealed > 0 && dialectOf(db) === 'sqlite') await sql`pragma wal_checkpoint(TRUNCATE)`.execute(db);
  return sealed;
}

/**
 * After a master-key rotation (`npm run keys:rewrap`): seals up to `limit` rows still under another
 * key (or plaintext) under the active one, so the old key can be retired. `left`: whether any such
 * row was found (call again until it is false).
 */
export async function resealCredentials(db: Kysely<Tables>, keyring: Keyring, limit: number): Promise<{ resealed: number; left: boolean }> {
  const rows = await rowsToSeal(db, keyring, 'not under the active key', '', limit);
  const sources = await resealSourceSettings(db, keyring, 'not under the active key', limit);
  return { resealed: (await reseal(db, keyring, rows)) + sources.resealed, left: rows.length > 0 || sources.found > 0 };
}

/** How many destinations' credentials each master key seals (PLAINTEXT_CREDENTIALS: none). */
export const credentialsByMasterKey = (db: Kysely<Tables>): Promise<Record<string, number>> => countsByMasterKey(db, 'destinations', 'credentials_key_id');
