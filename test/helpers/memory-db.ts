import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { migrateToLatest } from '../../src/store/migrations';
import type { Tables } from '../../src/store/tables';

/** The real schema in an in-memory SQLite (no file, no other process), with sources `src` and `other`. */
export async function memoryDatabase(): Promise<{ raw: Database.Database; db: Kysely<Tables> }> {
  const raw = new Database(':memory:');
  const db = new Kysely<Tables>({ dialect: new SqliteDialect({ database: raw }) });
  await migrateToLatest(db);
  raw.prepare(`INSERT INTO sources (id, name, write_key_hash, write_key_hint, created_at) VALUES ('src', 's', 'h', 'hint', 'now'), ('other', 'o', 'h2', 'hint', 'now')`).run();
  return { raw, db };
}
