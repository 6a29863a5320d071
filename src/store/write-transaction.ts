import { sql, type Kysely } from 'kysely';
import { dialectOf } from './dialect';

/**
 * One key for PostgreSQL's transaction-level advisory lock that write transactions take, so they
 * run one at a time across every process, as SQLite's write lock makes them (an arbitrary constant,
 * "switchyard" in ASCII bytes).
 */
const WRITE_LOCK_KEY = 0x7377_6974_6368n;

/**
 * The query executors of write transactions under way: a store write handed one (or a handle made
 * from it by withTables, which keeps the executor) runs inside it rather than opening another.
 */
const OPEN = new WeakSet<object>();

/**
 * A transaction that reads and then writes, with every other such transaction waiting its turn.
 * SQLite: BEGIN IMMEDIATE takes the write lock up front (a deferred transaction that reads and then
 * writes fails at once with SQLITE_BUSY when another process wrote in between; an immediate one
 * waits, busy_timeout). PostgreSQL: READ COMMITTED plus one advisory lock, held to commit, so a
 * read-then-write (merge two profiles, check a webhook count) cannot interleave with another
 * process's, without SERIALIZABLE's retry-on-conflict.
 */
export async function writeTransaction<DB, T>(db: Kysely<DB>, work: (trx: Kysely<DB>) => Promise<T>): Promise<T> {
  // Already inside one (a change and its audit row): the work joins it.
  if (OPEN.has(db.getExecutor())) return work(db);
  if (dialectOf(db) === 'postgres') {
    return db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(${WRITE_LOCK_KEY.toString()}::bigint)`.execute(trx);
      OPEN.add(trx.getExecutor());
      return work(trx);
    });
  }
  return db.connection().execute(async (connection) => {
    await sql`begin immediate`.execute(connection);
    OPEN.add(connection.getExecutor());
    try {
      const result = await work(connection);
      await sql`commit`.execute(connection);
      return result;
    } catch (err) {
      await sql`rollback`.execute(connection).catch(() => undefined);
      throw err;
    }
  });
}
