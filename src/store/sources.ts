import type { Kysely, Selectable } from 'kysely';
import { newId } from './ids';
import type { SourceRow, Tables } from './tables';
import type { Source, Store } from './types';
import { hashWriteKey, newWriteKey, writeKeyHint } from './write-keys';

function toSource(row: Selectable<SourceRow>): Source {
  return { id: row.id, name: row.name, writeKeyHint: row.write_key_hint, createdAt: row.created_at };
}

export function sourceStore(db: Kysely<Tables>): Store['sources'] {
  return {
    async create(name) {
      const writeKey = newWriteKey();
      const row: SourceRow = {
        id: newId('src'),
        name,
        write_key_hash: hashWriteKey(writeKey),
        write_key_hint: writeKeyHint(writeKey),
        created_at: new Date().toISOString(),
      };
      await db.insertInto('sources').values(row).execute();
      return { source: toSource(row), writeKey };
    },

    async get(id) {
      const row = await db.selectFrom('sources').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toSource(row);
    },

    async list() {
      const rows = await db.selectFrom('sources').selectAll().orderBy('created_at').orderBy('id').execute();
      return rows.map(toSource);
    },

    async delete(id) {
      // The destinations go with it: the foreign key cascades (see migrations).
      const result = await db.deleteFrom('sources').where('id', '=', id).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    async findByWriteKey(writeKey) {
      const row = await db
        .selectFrom('sources')
        .selectAll()
        .where('write_key_hash', '=', hashWriteKey(writeKey))
        .executeTakeFirst();
      return row && toSource(row);
    },
  };
}

/** Every source by its write key's hash: the whole table, a few rows (write-key-directory.ts). */
export async function sourcesByWriteKeyHash(db: Kysely<Tables>): Promise<Map<string, Source>> {
  const rows = await db.selectFrom('sources').selectAll().execute();
  return new Map(rows.map((row) => [row.write_key_hash, toSource(row)]));
}
