import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { openForRequest, type FailedRequestDetail } from '../../messages/source-function-request';
import type { SealedBody } from '../../delivery/types';
import { ERASED_BODY } from '../../privacy/sealed-body';
import type { Store } from '../../store/types';
import { actorOf, recordPayloadRead } from '../access/audit-trail';
import { notFound } from '../errors';
import { errorReplies } from './schemas';

/** Segment's Errors tab keeps a source function's last 100 errors. */
const LISTED = 100;

const FailedRequestView = Type.Object({
  id: Type.String(),
  functionId: Type.String(),
  version: Type.Integer({ description: 'The function version the request ran.' }),
  receivedAt: Type.String(),
  failedAt: Type.String(),
  reason: Type.String({ description: "The disposition and the error's class, e.g. `function:error: TypeError` or `function:retry: RetryError (retries exhausted)`." }),
  error: Type.Optional(Type.Object({ type: Type.String(), message: Type.String() }, { description: 'Only to a token with payloads:read: a function writes its errors from the request (sensitive settings masked).' })),
  request: Type.Optional(Type.Object({ headers: Type.Record(Type.String(), Type.String()), body: Type.String(), url: Type.String() }, { description: 'The raw request, only to a token with payloads:read.' })),
  logs: Type.Optional(Type.Array(Type.String(), { description: 'Console output of the failed run (4 KB at most), only to a token with payloads:read.' })),
  erased: Type.Optional(Type.Boolean({ description: `With payloads:read: the request's data key is gone, so its request and error read as "${ERASED_BODY}".` })),
});

/** A source function's failed requests, newest first: what happened to anyone; the request, the error and the logs to payloads:read. */
export const functionRequestRoutes: FastifyPluginAsyncTypebox<{ store: Store }> = async (app, { store }) => {
  app.get(
    '/sources/:sourceId/function-requests',
    { schema: { params: Type.Object({ sourceId: Type.String({ maxLength: 200 }) }), response: { 200: Type.Object({ requests: Type.Array(FailedRequestView) }), ...errorReplies } } },
    async (request) => {
      const { sourceId } = request.params;
      if (!(await store.sources.get(sourceId))) throw notFound(`source ${sourceId}`);
      const rows = await store.functionRequests.listFailed(sourceId, LISTED);
      const payloadsRead = actorOf(request).scopes.includes('payloads:read');
      if (payloadsRead && rows.length > 0) await recordPayloadRead(store.audit, request, 'payload.read', `${sourceId}/function-requests`);
      const requests = await Promise.all(
        rows.map(async (row) => {
          const base = { id: row.id, functionId: row.functionId, version: row.version, receivedAt: row.receivedAt, failedAt: row.failedAt, reason: row.reason };
          if (!payloadsRead) return base;
          const stored = JSON.parse(row.detail) as { raw: FailedRequestDetail } | { sealed: SealedBody };
          const detail = await openForRequest<FailedRequestDetail>(store.dataKeys, row.id, stored);
          if (!detail) return { ...base, erased: true };
          return { ...base, error: detail.error, request: detail.request, logs: detail.logs };
        }),
      );
      return { requests };
    },
  );
};
