import { mkdirSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { Tables } from './tables';

/**
 * How long a statement waits for another process's write lock before failing with SQLITE_BUSY.
 * Writes here are single small rows, so a wait this long means something is stuck, not busy.
 */
const BUSY_TIMEOUT_MS = 5_000;

/**
 * One SQLite file shared by the API and the worker, which are separate processes. This is the
 * only place that knows the dialect: a Postgres store would return a Kysely over PostgresDialect here.
 */
export function connectSqlite(databasePath: string): Kysely<Tables> {
  mkdirSync(path.dirname(path.resolve(databasePath)), { recursive: true });
  const database = new Database(databasePath);
  // busy_timeout first: switching to WAL itself takes a lock another process may hold.
  database.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  // WAL lets the worker read settings while the API writes, instead of readers blocking writers.
  database.pragma('journal_mode = WAL');
  // Off by default in SQLite, per connection; the schema relies on it to cascade source deletes.
  database.pragma('foreign_keys = ON');
  return new Kysely<Tables>({ dialect: new SqliteDialect({ database }) });
}
