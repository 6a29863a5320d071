import type { OperationalEndpoint, Store } from './types';
import { currentCopy, WholeTableCopy } from './whole-table-copy';

/**
 * How old the copy of the operational endpoints may be when no notification can tell it of a
 * change: on SQLite from another process (an endpoint made through the API reaches a worker's raises
 * within this), and on PostgreSQL while the LISTEN connection is down. Reading the table (a few
 * rows) at most once per this window, and only when an event is raised, costs next to nothing.
 */
export const OPERATIONAL_ENDPOINTS_UNNOTIFIED_FOR_MS = 1_000;

/** The operational endpoints, whole: what every raise of an event reads (temporal/operational-events.ts). */
export const operationalEndpointCopy = (unnotifiedForMs = OPERATIONAL_ENDPOINTS_UNNOTIFIED_FOR_MS) => new WholeTableCopy<OperationalEndpoint[]>([], unnotifiedForMs);

/**
 * The endpoint store with `listCached` served from `copy`, read again after a change: a NOTIFY on
 * PostgreSQL (store-notifications.ts), a change made through this store at once, otherwise once the
 * copy is older than its window. Only the list an event is raised to is cached: every send reads its
 * endpoint again (activities/operational-events.ts), so an endpoint switched off or deleted is
 * skipped at once, whatever the copy still says.
 */
export function cachedOperationalEndpointReads(endpoints: Store['operationalEndpoints'], copy: WholeTableCopy<OperationalEndpoint[]>, clock: () => number = Date.now): Store['operationalEndpoints'] {
  const current = currentCopy(copy, () => endpoints.list(), clock);
  return {
    ...endpoints,
    create: (settings, secret) => endpoints.create(settings, secret).finally(() => copy.changedAll()),
    update: (id, patch, secret) => endpoints.update(id, patch, secret).finally(() => copy.changedAll()),
    delete: (id) => endpoints.delete(id).finally(() => copy.changedAll()),
    listCached: current,
  };
}
