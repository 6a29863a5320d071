import type { Kysely, Migration } from 'kysely';
import { dialectOf } from './dialect';

/**
 * Personas tables (registered as 0003_personas in migrations.ts). The indexes are the ones the
 * queries need: audience conditions look events up by (source, event, profile, time) and so do
 * computed traits; merges and deletions find a person's rows by profile id.
 */
export const personasMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('profiles')
      .addColumn('source_id', 'text', (c) => c.notNull().references('sources.id').onDelete('cascade'))
      .addColumn('profile_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text')
      .addColumn('traits', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('profiles_pk', ['source_id', 'profile_id'])
      .execute();

    await db.schema
      .createTable('profile_events')
      // SQLite: an INTEGER PRIMARY KEY is the rowid, numbered on insert; PostgreSQL needs an identity.
      .addColumn('id', dialectOf(db) === 'postgres' ? 'bigserial' : 'integer', (c) => c.primaryKey())
      .addColumn('source_id', 'text', (c) => c.notNull().references('sources.id').onDelete('cascade'))
      .addColumn('profile_id', 'text', (c) => c.notNull())
      .addColumn('message_id', 'text', (c) => c.notNull())
      .addColumn('event', 'text', (c) => c.notNull())
      .addColumn('properties', 'text', (c) => c.notNull())
      .addColumn('timestamp', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('profile_events_message').unique().on('profile_events').columns(['source_id', 'message_id']).execute();
    await db.schema.createIndex('profile_events_lookup').on('profile_events').columns(['source_id', 'event', 'profile_id', 'timestamp']).execute();
    await db.schema.createIndex('profile_events_profile').on('profile_events').columns(['profile_id', 'source_id']).execute();

    await db.schema
      .createTable('profile_aliases')
      .addColumn('source_id', 'text', (c) => c.notNull().references('sources.id').onDelete('cascade'))
      .addColumn('alias_id', 'text', (c) => c.notNull())
      .addColumn('profile_id', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('profile_aliases_pk', ['source_id', 'alias_id'])
      .execute();
    await db.schema.createIndex('profile_aliases_profile').on('profile_aliases').columns(['profile_id', 'source_id']).execute();

    for (const table of ['audiences', 'computed_traits']) {
      await db.schema
        .createTable(table)
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('source_id', 'text', (c) => c.notNull().references('sources.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('definition', 'text', (c) => c.notNull())
        .addColumn('schedule', 'text', (c) => c.notNull())
        .addColumn('paused', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addColumn('last_version', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('last_synced_at', 'text')
        .addColumn('pending_version', 'integer')
        .addColumn('pending_at', 'text')
        .addColumn('pending_changes', 'integer')
        .execute();
      await db.schema.createIndex(`${table}_key`).unique().on(table).columns(['source_id', 'key']).execute();
    }

    await db.schema
      .createTable('personas_snapshots')
      .addColumn('computation_id', 'text', (c) => c.notNull())
      .addColumn('profile_id', 'text', (c) => c.notNull())
      .addColumn('source_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text')
      .addColumn('value', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('personas_snapshots_pk', ['computation_id', 'profile_id'])
      .execute();
    await db.schema.createIndex('personas_snapshots_profile').on('personas_snapshots').columns(['profile_id', 'source_id']).execute();

    await db.schema
      .createTable('personas_changes')
      .addColumn('computation_id', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('profile_id', 'text', (c) => c.notNull())
      .addColumn('source_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text')
      .addColumn('value', 'text', (c) => c.notNull())
      .addColumn('cleared', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('personas_changes_pk', ['computation_id', 'version', 'profile_id'])
      .execute();
    await db.schema.createIndex('personas_changes_profile').on('personas_changes').columns(['profile_id', 'source_id']).execute();
  },
};
