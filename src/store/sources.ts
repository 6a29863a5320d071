import type { Kysely } from 'kysely';
import { CredentialSealError } from '../privacy/credential-seal';
import type { Keyring } from '../privacy/keyring';
import { openedSourceFunctionSettings, storedSourceFunctionSettings } from './source-function-settings';
import { newId } from './ids';
import type { SourceRow, Tables } from './tables';
import type { Source, SourceFields, SourceLabel, Store } from './types';
import { hashWriteKey, newWriteKey, writeKeyHint } from './write-keys';

/** Another source already has this write key (write keys are unique: a key names one source). */
export class WriteKeyTaken extends Error {
  constructor() {
    super('writeKey: another source already has this write key');
  }
}

/** Another source was already imported from this Segment id. */
export class SegmentIdTaken extends Error {
  constructor(readonly segmentId: string) {
    super(`segmentId: another source was already imported from Segment source ${segmentId}`);
  }
}

function toSource(row: SourceRow, keyring: Keyring | undefined): Source {
  const source: Source = { id: row.id, name: row.name, writeKeyHint: row.write_key_hint, createdAt: row.created_at, labels: parseLabels(row.labels) };
  if (row.slug) source.slug = row.slug;
  if (row.segment_id) source.segmentId = row.segment_id;
  if (row.function_id) source.function = functionOf(keyring, row.id, row.function_id, row.function_settings);
  return source;
}

/** A source's function; settings that do not open fail this source's function alone, never a read of the source. */
function functionOf(keyring: Keyring | undefined, sourceId: string, functionId: string, stored: string | null | undefined): Source['function'] {
  try {
    return { functionId, settings: openedSourceFunctionSettings(keyring, sourceId, stored) };
  } catch (err) {
    if (!(err instanceof CredentialSealError)) throw err;
    return { functionId, settings: {}, unreadable: err.message };
  }
}

function parseLabels(text: string | undefined): SourceLabel[] {
  if (!text) return [];
  const parsed = JSON.parse(text) as unknown;
  return Array.isArray(parsed) ? (parsed as SourceLabel[]) : [];
}

/** A unique index refused the row (SQLite and PostgreSQL say it differently). */
function uniqueViolation(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === '23505';
}

function columns(keyring: Keyring | undefined, id: string, fields: SourceFields): Partial<SourceRow> {
  const row: Partial<SourceRow> = {};
  if (fields.name !== undefined) row.name = fields.name;
  if (fields.slug !== undefined) row.slug = fields.slug;
  if (fields.labels !== undefined) row.labels = JSON.stringify(fields.labels);
  if (fields.segmentId !== undefined) row.segment_id = fields.segmentId;
  if (fields.function !== undefined) {
    row.function_id = fields.function?.functionId ?? null;
    row.function_settings = fields.function ? storedSourceFunctionSettings(keyring, id, fields.function.settings) : null;
  }
  if (fields.writeKey !== undefined) {
    row.write_key_hash = hashWriteKey(fields.writeKey);
    row.write_key_hint = writeKeyHint(fields.writeKey);
  }
  return row;
}

export function sourceStore(db: Kysely<Tables>, keyring?: Keyring): Store['sources'] {
  /** Checked before the write so the answer names the field; the unique indexes still hold against a race. */
  async function refuseTaken(fields: SourceFields, exceptId?: string): Promise<void> {
    if (fields.writeKey !== undefined) {
      const holder = await db.selectFrom('sources').select('id').where('write_key_hash', '=', hashWriteKey(fields.writeKey)).executeTakeFirst();
      if (holder && holder.id !== exceptId) throw new WriteKeyTaken();
    }
    if (fields.segmentId) {
      const holder = await db.selectFrom('sources').select('id').where('segment_id', '=', fields.segmentId).executeTakeFirst();
      if (holder && holder.id !== exceptId) throw new SegmentIdTaken(fields.segmentId);
    }
  }

  function taken(err: unknown, fields: SourceFields): never {
    if (uniqueViolation(err)) {
      if (fields.segmentId && String((err as Error).message).includes('segment_id')) throw new SegmentIdTaken(fields.segmentId);
      if (fields.writeKey !== undefined) throw new WriteKeyTaken();
    }
    throw err;
  }

  return {
    async create(name, fields = {}) {
      await refuseTaken(fields);
      const writeKey = fields.writeKey ?? newWriteKey();
      const id = newId('src');
      const row: SourceRow = {
        id,
        name,
        write_key_hash: hashWriteKey(writeKey),
        write_key_hint: writeKeyHint(writeKey),
        created_at: new Date().toISOString(),
        slug: fields.slug ?? null,
        labels: JSON.stringify(fields.labels ?? []),
        segment_id: fields.segmentId ?? null,
        ...(fields.function && { function_id: fields.function.functionId, function_settings: storedSourceFunctionSettings(keyring, id, fields.function.settings) }),
      };
      try {
        await db.insertInto('sources').values(row).execute();
      } catch (err) {
        taken(err, fields);
      }
      return { source: toSource(row, keyring), writeKey };
    },

    async update(id, fields) {
      await refuseTaken(fields, id);
      const changes = columns(keyring, id, fields);
      if (Object.keys(changes).length > 0) {
        try {
          await db.updateTable('sources').set(changes).where('id', '=', id).execute();
        } catch (err) {
          taken(err, fields);
        }
      }
      const row = await db.selectFrom('sources').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toSource(row, keyring);
    },

    async get(id) {
      const row = await db.selectFrom('sources').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toSource(row, keyring);
    },

    async list() {
      const rows = await db.selectFrom('sources').selectAll().orderBy('created_at').orderBy('id').execute();
      return rows.map((row) => toSource(row, keyring));
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
      return row && toSource(row, keyring);
    },

    async findBySegmentId(segmentId) {
      const row = await db.selectFrom('sources').selectAll().where('segment_id', '=', segmentId).executeTakeFirst();
      return row && toSource(row, keyring);
    },
  };
}

/** Every source by its write key's hash: the whole table, a few rows (write-key-directory.ts). */
export async function sourcesByWriteKeyHash(db: Kysely<Tables>, keyring?: Keyring): Promise<Map<string, Source>> {
  const rows = await db.selectFrom('sources').selectAll().execute();
  return new Map(rows.map((row) => [row.write_key_hash, toSource(row, keyring)]));
}
