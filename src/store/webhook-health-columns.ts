import { LATENCY_BOUNDS_MS } from '../delivery/webhook-health';

/**
 * The latency histogram of `webhook_health` as columns, one per bucket (`latency_le_<bound>`, then
 * `latency_over`): plain integers that an upsert can add to, on SQLite and PostgreSQL alike.
 */
export type LatencyColumn = `latency_le_${(typeof LATENCY_BOUNDS_MS)[number]}` | 'latency_over';

export const LATENCY_COLUMNS: readonly LatencyColumn[] = [...LATENCY_BOUNDS_MS.map((bound) => `latency_le_${bound}` as LatencyColumn), 'latency_over'];
