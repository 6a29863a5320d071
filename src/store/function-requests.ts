import type { Kysely } from 'kysely';
import type { FunctionRequestRow, Tables } from './tables';
import type { FailedFunctionRequest, Store } from './types';

/** Source functions' failed requests: one row each, written once by the request's workflow. */
export function functionRequestStore(db: Kysely<Tables>): Store['functionRequests'] {
  const toRequest = (row: FunctionRequestRow): FailedFunctionRequest => ({
    id: row.id,
    sourceId: row.source_id,
    functionId: row.function_id,
    version: row.version,
    receivedAt: row.received_at,
    failedAt: row.failed_at,
    reason: row.reason,
    detail: row.detail,
  });
  return {
    async recordFailure(request) {
      const row: FunctionRequestRow = {
        id: request.id,
        source_id: request.sourceId,
        function_id: request.functionId,
        version: request.version,
        received_at: request.receivedAt,
        failed_at: request.failedAt,
        reason: request.reason,
        detail: request.detail,
      };
      // The source may be gone (its rows go with it); a second write of the same request changes nothing.
      const source = await db.selectFrom('sources').select('id').where('id', '=', request.sourceId).executeTakeFirst();
      if (!source) return;
      await db
        .insertInto('function_requests')
        .values(row)
        .onConflict((c) => c.column('id').doNothing())
        .execute();
    },
    async listFailed(sourceId, limit) {
      const rows = await db.selectFrom('function_requests').selectAll().where('source_id', '=', sourceId).orderBy('failed_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
      return rows.map(toRequest);
    },
    async details() {
      return db.selectFrom('function_requests').select(['id', 'detail']).execute();
    },
    async forget(ids) {
      // In slices: SQLite caps a statement's bound values.
      for (let i = 0; i < ids.length; i += 500) await db.deleteFrom('function_requests').where('id', 'in', ids.slice(i, i + 500)).execute();
    },
  };
}
