import { sql, type Kysely } from 'kysely';

/**
 * A transaction that takes SQLite's write lock up front (BEGIN IMMEDIATE). A deferred transaction
 * that reads and then writes fails at once with SQLITE_BUSY when the other process (API or worker)
 * wrote in between; an immediate one waits its turn (busy_timeout) instead.
 */
export async function writeTransaction<DB, T>(db: Kysely<DB>, work: (trx: Kysely<DB>) => Promise<T>): Promise<T> {
  return db.connection().execute(async (connection) => {
    await sql`begin immediate`.execute(connection);
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
