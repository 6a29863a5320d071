import { createHash, randomBytes } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import { isScope } from '../access/scopes';
import { newId } from './ids';
import type { AdminTokenRow, Tables } from './tables';
import type { AdminToken, TokenStore } from './types';

/** What every admin token starts with, so a leaked one is recognisable (secret scanners, logs). */
export const TOKEN_PREFIX = 'swy_';

/**
 * SHA-256 is enough: a token is 256 random bits, so there is nothing to guess a hash back from
 * (unlike a password, which would want a slow hash). The lookup by hash keeps the secret itself
 * out of every comparison.
 */
export const hashToken = (secret: string) => createHash('sha256').update(secret, 'utf8').digest('hex');

function toToken(row: Selectable<AdminTokenRow>): AdminToken {
  return {
    id: row.id,
    name: row.name,
    scopes: (JSON.parse(row.scopes) as string[]).filter(isScope),
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
  };
}

export function adminTokenStore(db: Kysely<Tables>): TokenStore {
  return {
    async create({ name, scopes, expiresAt }) {
      const secret = `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
      const row: AdminTokenRow = {
        id: newId('tok'),
        name,
        token_hash: hashToken(secret),
        scopes: JSON.stringify(scopes),
        created_at: new Date().toISOString(),
        expires_at: expiresAt,
        last_used_at: null,
        revoked_at: null,
      };
      await db.insertInto('admin_tokens').values(row).execute();
      return { token: toToken(row), secret };
    },

    async findBySecret(secret) {
      const row = await db.selectFrom('admin_tokens').selectAll().where('token_hash', '=', hashToken(secret)).where('revoked_at', 'is', null).executeTakeFirst();
      return row && toToken(row);
    },

    async list() {
      return (await db.selectFrom('admin_tokens').selectAll().orderBy('created_at').orderBy('id').execute()).map(toToken);
    },

    async revoke(id, at) {
      const result = await db.updateTable('admin_tokens').set({ revoked_at: at }).where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    async touch(id, at) {
      await db.updateTable('admin_tokens').set({ last_used_at: at }).where('id', '=', id).execute();
    },
  };
}
