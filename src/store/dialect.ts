import { PostgresAdapter, type Kysely } from 'kysely';

/** The two SQL dialects the store runs on: SQLite (embedded default) and PostgreSQL (DATABASE_URL). */
export type SqlDialect = 'sqlite' | 'postgres';

/**
 * Which dialect a Kysely instance (or a transaction or connection of one) speaks, for the few
 * statements that differ: locking, JSON functions. Read from the adapter so no caller threads it.
 */
export function dialectOf(db: Kysely<any>): SqlDialect {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}
