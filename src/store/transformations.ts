import type { Kysely, Selectable } from 'kysely';
import type { TransformationRules } from '../rules/transformations';
import { newId } from './ids';
import type { Tables, TransformationRow } from './tables';

/** A transformation as the API takes it: its source, its scope and what it does. */
export interface TransformationSettings extends TransformationRules {
  sourceId: string;
  /** Segment's catalog id of the destinations it is scoped to; null: every destination of the source. */
  destinationMetadataId: string | null;
}

export interface TransformationRecord extends TransformationSettings {
  id: string;
  createdAt: string;
  updatedAt: string;
}

export interface TransformationStore {
  create(settings: TransformationSettings): Promise<TransformationRecord>;
  /** Every transformation, or one source's, in the order they were made. */
  list(sourceId?: string): Promise<TransformationRecord[]>;
  get(id: string): Promise<TransformationRecord | undefined>;
  update(id: string, settings: TransformationSettings): Promise<TransformationRecord | undefined>;
  delete(id: string): Promise<boolean>;
  /** A source's switched-on transformations in saved order: what ingest decides by, in one read. */
  listEnabledFor(sourceId: string): Promise<TransformationRecord[]>;
}

type Rules = Omit<TransformationRules, 'name' | 'enabled'>;

function toRecord(row: Selectable<TransformationRow>): TransformationRecord {
  return {
    id: row.id,
    sourceId: row.source_id,
    destinationMetadataId: row.destination_metadata_id,
    name: row.name,
    enabled: row.enabled === 1,
    ...(JSON.parse(row.rules) as Rules),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function columns(settings: TransformationSettings) {
  const { sourceId, destinationMetadataId, name, enabled, ...rules } = settings;
  // Only what it does is kept as JSON; an absent optional field is left out, never written as null.
  const kept = Object.fromEntries(Object.entries(rules).filter(([, value]) => value !== undefined));
  return { source_id: sourceId, destination_metadata_id: destinationMetadataId, name, enabled: enabled ? 1 : 0, rules: JSON.stringify(kept) };
}

export function transformationStore(db: Kysely<Tables>): TransformationStore {
  const find = (id: string) => db.selectFrom('transformations').selectAll().where('id', '=', id).executeTakeFirst();
  return {
    async create(settings) {
      const at = new Date().toISOString();
      const row: TransformationRow = { id: newId('tfm'), ...columns(settings), created_at: at, updated_at: at };
      await db.insertInto('transformations').values(row).execute();
      return toRecord(row);
    },

    async list(sourceId) {
      let query = db.selectFrom('transformations').selectAll();
      if (sourceId !== undefined) query = query.where('source_id', '=', sourceId);
      return (await query.orderBy('created_at').orderBy('id').execute()).map(toRecord);
    },

    async get(id) {
      const row = await find(id);
      return row && toRecord(row);
    },

    async update(id, settings) {
      const result = await db
        .updateTable('transformations')
        .set({ ...columns(settings), updated_at: new Date().toISOString() })
        .where('id', '=', id)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) return undefined;
      const row = await find(id);
      return row && toRecord(row);
    },

    async delete(id) {
      const result = await db.deleteFrom('transformations').where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    async listEnabledFor(sourceId) {
      const rows = await db.selectFrom('transformations').selectAll().where('source_id', '=', sourceId).where('enabled', '=', 1).orderBy('created_at').orderBy('id').execute();
      return rows.map(toRecord);
    },
  };
}
