import { mkdirSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import type { Tables } from './tables';

/**
 * How long a statement waits for another process's write lock before failing with SQLITE_BUSY.
 * Writes here are single small rows, so a wait this long means something is stuck, not busy.
 */
const BUSY_TIMEOUT_MS = 5_000;

/**
 * Connections one process keeps to PostgreSQL. The hot path reads one or two rows per request or
 * attempt; more connections than this only queue inside PostgreSQL instead of here.
 */
const POSTGRES_POOL_SIZE = 10;

/**
 * One SQLite file shared by the API and the worker, which are separate processes on one machine:
 * the embedded default of `npm start`.
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

/** A pool on a PostgreSQL database shared by any number of API and worker processes (DATABASE_URL). */
export function postgresPool(databaseUrl: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: POSTGRES_POOL_SIZE, application_name: 'switchyard' });
  // An idle connection the server drops (restart, failover) errors here; the pool replaces it.
  pool.on('error', () => undefined);
  return pool;
}

export function connectPostgres(pool: pg.Pool): Kysely<Tables> {
  return new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) });
}

/** What an error names as the database: the URL without its password. */
export function redactDatabaseUrl(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    if (url.password) url.password = '***';
    return url.href;
  } catch {
    return 'DATABASE_URL';
  }
}
