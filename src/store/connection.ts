import { mkdirSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql, type SqliteDatabase } from 'kysely';
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
  switchToWal(database);
  // Off by default in SQLite, per connection; the schema relies on it to cascade source deletes.
  database.pragma('foreign_keys = ON');
  // Deleted rows are overwritten, not left in free pages: a regulation's deletions (profiles,
  // events, seen users) must not linger readable in the file.
  database.pragma('secure_delete = ON');
  return new Kysely<Tables>({ dialect: new SqliteDialect({ database: keepingStatements(database) }) });
}

/**
 * `secure_delete` zeroes a deleted row in the page, but in WAL mode the page as it was before goes
 * on being readable in `-wal` (a checkpoint copies frames into the file without erasing them, and a
 * new log overwrites them only as far as it grows). TRUNCATE copies every frame into the main file
 * and cuts the log to zero bytes, waiting (busy_timeout) for readers of the old frames to finish.
 * True when it could; false when a reader held on past the timeout.
 */
export async function truncateWriteAheadLog(db: Kysely<Tables>): Promise<boolean> {
  const { rows } = await sql<{ busy: number }>`pragma wal_checkpoint(TRUNCATE)`.execute(db);
  return rows[0]?.busy === 0;
}

/**
 * Switching a new file to WAL while another process opens it too (API and worker started at once)
 * can answer SQLITE_BUSY at once, without waiting out busy_timeout (seen in a fresh-clone run:
 * "database is locked" stopped a worker at start). Asked again, briefly, within the same timeout.
 */
function switchToWal(database: Database.Database): void {
  const deadline = Date.now() + BUSY_TIMEOUT_MS;
  for (;;) {
    try {
      database.pragma('journal_mode = WAL');
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() >= deadline) throw err;
      // Start-up only: a synchronous 20 ms pause, as the open itself is synchronous.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    }
  }
}

/** Distinct SQL texts whose compiled statements a SQLite connection keeps (an `IN` list's length makes a text of its own). */
const STATEMENT_CACHE_SIZE = 256;

/**
 * Kysely's SQLite driver prepares every query it runs, and better-sqlite3 compiles the SQL each
 * time: on the hot path (the write key and destinations per request, the destination and the
 * erasure check per attempt, always the same few texts) that compiling was over half the reads'
 * CPU (measured: 210-245 µs for those four reads before, 107 µs with statements kept). Statements
 * are kept by their text, least recently used dropped first. Reusing one is safe: Kysely runs one
 * query at a time on its SQLite connection, and `all`/`run` finish before returning.
 */
function keepingStatements(database: Database.Database): SqliteDatabase {
  const statements = new Map<string, Database.Statement>();
  return {
    close: () => database.close(),
    prepare(sql) {
      let statement = statements.get(sql);
      if (statement) statements.delete(sql);
      else {
        statement = database.prepare(sql);
        if (statements.size >= STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value!);
      }
      statements.set(sql, statement);
      return statement;
    },
  };
}

/** A pool on a PostgreSQL database shared by any number of API and worker processes (DATABASE_URL). */
/**
 * How long a request waits for a connection before the store counts as away (503 with Retry-After):
 * PostgreSQL refusing connections fails at once, but a server behind a cut network would hang.
 */
const POSTGRES_CONNECT_TIMEOUT_MS = 5_000;

export function postgresPool(databaseUrl: string): pg.Pool {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: POSTGRES_POOL_SIZE,
    application_name: 'switchyard',
    connectionTimeoutMillis: POSTGRES_CONNECT_TIMEOUT_MS,
    // A peer that vanished without a FIN (failover, cut network) is found by TCP keepalive.
    keepAlive: true,
  });
  // An idle connection the server drops (restart, failover) errors here; the pool replaces it.
  pool.on('error', () => undefined);
  // The pool listens for errors of idle connections only: a connection checked out when PostgreSQL
  // goes away (restart, crash, a terminated backend) emits 'error' with no listener, which throws
  // and ends the process (brianc/node-postgres#3202, brianc/node-postgres#2439). Its query, if any, fails on its own;
  // the pool then drops it on release, as it is no longer queryable.
  pool.on('connect', (client) => client.on('error', () => undefined));
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
