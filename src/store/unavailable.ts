/**
 * Whether a store error means "the database is away for now" (restarting, failing over, not yet
 * accepting connections, the connection cut), as opposed to a bug or a bad query. The API answers
 * the first with 503 and Retry-After, as it does when Temporal is away: the sender retries and
 * loses nothing. Decided from the error's code only, never its text where a code exists.
 */

/** SQLSTATE classes and codes of a server that is away or going away (PostgreSQL appendix A). */
const UNAVAILABLE_SQLSTATE_CLASSES = ['08']; // connection_exception
const UNAVAILABLE_SQLSTATES = new Set([
  '57P01', // admin_shutdown: pg_ctl stop -m fast, or a terminated backend
  '57P02', // crash_shutdown: pg_ctl stop -m immediate, or a crashed sibling backend
  '57P03', // cannot_connect_now: starting up, in recovery, shutting down
  '57P05', // idle_session_timeout
  '53300', // too_many_connections
  '40001', // serialization_failure: retrying the request succeeds
  '40P01', // deadlock_detected: as above
]);

/** Socket errors of a server that cannot be reached or dropped the connection. */
const UNAVAILABLE_SYSCALL_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND']);

/** SQLite: another process holds the write lock past busy_timeout. */
const UNAVAILABLE_SQLITE_CODES = new Set(['SQLITE_BUSY', 'SQLITE_LOCKED']);

/**
 * node-postgres raises these without a code: its own messages for a connection that ended under a
 * query, a pool that could not connect in time, and a client that already lost its connection.
 */
const UNAVAILABLE_PG_MESSAGES = [/^Connection terminated/, /^timeout exceeded when trying to connect$/, /is not queryable$/, /^Query read timeout$/];

export function isStoreUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (UNAVAILABLE_SQLSTATES.has(code) || (/^[0-9A-Z]{5}$/.test(code) && UNAVAILABLE_SQLSTATE_CLASSES.includes(code.slice(0, 2)))) return true;
    if (UNAVAILABLE_SYSCALL_CODES.has(code) || UNAVAILABLE_SQLITE_CODES.has(code)) return true;
  }
  if (UNAVAILABLE_PG_MESSAGES.some((pattern) => pattern.test(err.message))) return true;
  // An AggregateError (a host with several addresses, all refused) is away if each attempt was.
  if (err instanceof AggregateError && err.errors.length > 0) return err.errors.every(isStoreUnavailable);
  return (err as { cause?: unknown }).cause !== undefined && isStoreUnavailable((err as { cause?: unknown }).cause);
}
