import type { Store } from '../store';

/** A store that does not answer this fast counts as away (PostgreSQL's connect timeout is longer). */
const STORE_PING_TIMEOUT_MS = 2_000;

/** What /admin/status says when the store does not answer. */
export const STORE_AWAY = `store: no answer within ${STORE_PING_TIMEOUT_MS / 1000} s (DATABASE_URL or DATABASE_PATH)`;

/** Whether the settings store (SQLite file or PostgreSQL) answers a trivial query within the timeout. */
export async function storeAnswers(store: Store): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), STORE_PING_TIMEOUT_MS)));
  const answered = store.ping().then(() => true, () => false);
  try {
    return await Promise.race([answered, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
