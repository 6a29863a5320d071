/**
 * How long a reading of the system (/health, /admin/status) is answered after it settled: however
 * many probes ask, each route reads Temporal and the store at most once a second per process.
 */
export const READING_FRESH_MS = 1_000;

/**
 * - `ok`: nothing wrong.
 * - `degraded`: this API takes ingestion (store and Temporal answer), but something else is wrong
 *   (no worker on a task queue, a search attribute missing): calls are accepted and wait.
 * - `unavailable`: it cannot take ingestion: the store or Temporal does not answer.
 */
export type SystemStatus = 'ok' | 'degraded' | 'unavailable';

export function systemStatus(reading: { store: boolean; temporal: boolean; problems: string[] }): SystemStatus {
  if (!reading.store || !reading.temporal) return 'unavailable';
  return reading.problems.length > 0 ? 'degraded' : 'ok';
}
