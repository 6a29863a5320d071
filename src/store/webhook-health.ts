import { sql, type Kysely } from 'kysely';
import type { HealthBucket } from '../delivery/webhook-health';
import { chunks } from './chunks';
import type { Tables, WebhookHealthRow } from './tables';
import type { Store } from './types';
import { LATENCY_COLUMNS } from './webhook-health-columns';

/** Rows per INSERT: 33 columns each, well under SQLite's bound-parameter limit. */
const ROWS_PER_INSERT = 200;

function toRow(bucket: HealthBucket): WebhookHealthRow {
  const row = {
    destination_id: bucket.destinationId,
    url: bucket.url,
    minute: bucket.minute,
    successes: bucket.successes,
    retry_failures: bucket.retryFailures,
    permanent_failures: bucket.permanentFailures,
    last_error: bucket.lastError?.reason ?? null,
    last_error_ms: bucket.lastError ? bucket.lastError.atMs - bucket.minute * 60_000 : null,
    throttled_ms: bucket.throttledMs ?? 0,
    held_ms: bucket.heldMs ?? 0,
    backpressured_ms: bucket.backpressuredMs ?? 0,
  } as WebhookHealthRow;
  LATENCY_COLUMNS.forEach((column, i) => (row[column] = bucket.latency[i] ?? 0));
  return row;
}

function toBucket(row: WebhookHealthRow): HealthBucket {
  return {
    destinationId: row.destination_id,
    url: row.url,
    minute: Number(row.minute),
    successes: Number(row.successes),
    retryFailures: Number(row.retry_failures),
    permanentFailures: Number(row.permanent_failures),
    latency: LATENCY_COLUMNS.map((column) => Number(row[column])),
    ...(row.last_error !== null && row.last_error_ms !== null && { lastError: { reason: row.last_error, atMs: Number(row.minute) * 60_000 + Number(row.last_error_ms) } }),
    ...(Number(row.throttled_ms) > 0 && { throttledMs: Number(row.throttled_ms) }),
    ...(Number(row.held_ms) > 0 && { heldMs: Number(row.held_ms) }),
    ...(Number(row.backpressured_ms) > 0 && { backpressuredMs: Number(row.backpressured_ms) }),
  };
}

const COUNT_COLUMNS = ['successes', 'retry_failures', 'permanent_failures', 'throttled_ms', 'held_ms', 'backpressured_ms', ...LATENCY_COLUMNS] as const;

export function webhookHealthStore(db: Kysely<Tables>): Store['webhookHealth'] {
  return {
    async add(buckets, options = {}) {
      if (buckets.length === 0 && options.deleteBeforeMinute === undefined) return;
      // One transaction, so a flush that fails leaves nothing half-added and the worker can keep its
      // counts for the next one. Buckets arrive sorted by key: concurrent flushes of several workers
      // lock rows in one order on PostgreSQL, never in a cycle.
      await db.transaction().execute(async (trx) => {
        for (const rows of chunks(buckets.map(toRow), ROWS_PER_INSERT)) {
          await trx
            .insertInto('webhook_health')
            .values(rows)
            .onConflict((conflict) =>
              conflict.columns(['destination_id', 'url', 'minute']).doUpdateSet((eb) => {
                const set: Record<string, unknown> = {};
                // Adds to the row: every worker's counts for the same URL and minute end up in one row.
                for (const column of COUNT_COLUMNS) set[column] = eb(eb.ref(`webhook_health.${column}`), '+', eb.ref(`excluded.${column}`));
                // The later of the two errors stays (SET reads the row as it was, so both use the old time).
                const newer = sql`excluded.last_error_ms is not null and (webhook_health.last_error_ms is null or excluded.last_error_ms >= webhook_health.last_error_ms)`;
                set.last_error = sql`case when ${newer} then excluded.last_error else webhook_health.last_error end`;
                set.last_error_ms = sql`case when ${newer} then excluded.last_error_ms else webhook_health.last_error_ms end`;
                return set;
              }),
            )
            .execute();
        }
        if (options.deleteBeforeMinute !== undefined) await trx.deleteFrom('webhook_health').where('minute', '<', options.deleteBeforeMinute).execute();
      });
    },

    async read(destinationId, sinceMinute) {
      const rows = await db.selectFrom('webhook_health').selectAll().where('destination_id', '=', destinationId).where('minute', '>=', sinceMinute).execute();
      return rows.map(toBucket);
    },
  };
}
