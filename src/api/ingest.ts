import rateLimit from '@fastify/rate-limit';
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { deliveryPolicy, type Config } from '../config';
import type { Call } from '../messages/call';
import { ingestCalls, type IngestDependencies } from '../messages/ingest-calls';
import { deliveryPlanner } from '../messages/plan-deliveries';
import type { Store } from '../store/types';
import type { Deliveries } from '../ports';
import { ApiError, badRequest } from './errors';
import { acceptGzipBodies } from './gzip';
import { Accepted, BatchBody, CallBody, ErrorReply } from './ingest-schema';
import { hashWriteKey } from '../store/write-keys';
import { formatDuration } from '../delivery/duration';
import { authenticateSource, writeKeyOf } from './write-key';

interface IngestOptions {
  store: Store;
  deliveries: Deliveries;
  config: Config;
}

const responses = { 200: Accepted, 400: ErrorReply, 401: ErrorReply, 429: ErrorReply, 503: ErrorReply };

/**
 * Segment Tracking API over HTTP: one route per call type plus batch/import, each turning its body
 * into calls for the message path (src/messages/ingest-calls.ts). A 200 means Temporal holds a
 * workflow for every message of the request; otherwise the client gets an error and retries.
 */
export const ingestRoutes: FastifyPluginAsync<IngestOptions> = async (parent, { store, deliveries, config }) => {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  acceptGzipBodies(app);
  const dependencies: IngestDependencies = {
    store,
    deliveries,
    planDeliveries: deliveryPlanner(store.destinations, deliveryPolicy(config)),
    startTimeoutMs: config.ingestStartTimeout,
  };

  // One bucket per write key (its hash, the same key the store looks sources up by), so a noisy
  // source gets 429s while the others carry on. Counted after the body is parsed (a write key may
  // be in it) and before validation, so a flood of invalid requests is limited too.
  if (config.ingestRateLimit > 0) {
    await app.register(rateLimit, {
      max: config.ingestRateLimit,
      timeWindow: config.ingestRateWindow,
      hook: 'preValidation',
      keyGenerator: (request) => {
        const writeKey = writeKeyOf(request);
        return writeKey ? `write-key:${hashWriteKey(writeKey)}` : `address:${request.ip}`;
      },
      errorResponseBuilder: (_request, context) =>
        new ApiError(429, 'rate_limited', `too many requests for this write key (at most ${context.max} per ${formatDuration(config.ingestRateWindow)}); retry in ${context.after}`),
    });
  }

  async function ingest(sourceId: string, calls: Call[], inBatch: boolean, batchSentAt?: string): Promise<void> {
    const result = await ingestCalls(dependencies, { sourceId, calls, receivedAtMs: Date.now(), batchSentAt, inBatch });
    if (result.status === 'rejected') throw badRequest(result.problem);
    if (result.status === 'unavailable') {
      app.log.error({ err: result.reason, sourceId }, 'could not start deliveries');
      throw new ApiError(503, 'temporal_unavailable', 'messages were not accepted: the workflow engine is unavailable; retry later', { 'retry-after': '5' });
    }
  }

  for (const type of ['identify', 'track', 'page', 'screen', 'group', 'alias'] as const) {
    app.post(`/v1/${type}`, { schema: { body: CallBody, response: responses } }, async (request) => {
      const source = await authenticateSource(request, store);
      await ingest(source.id, [{ type, fields: request.body }], false);
      return { success: true as const };
    });
  }

  for (const path of ['/v1/batch', '/v1/import']) {
    app.post(path, { schema: { body: BatchBody, response: responses } }, async (request) => {
      const source = await authenticateSource(request, store);
      const { batch, context, integrations, sentAt } = request.body;
      // Batch-level context and integrations apply to every message; a message's own keys win.
      const calls = batch.map((fields): Call => ({
        type: fields.type,
        fields: { ...fields, context: { ...context, ...fields.context }, integrations: integrations || fields.integrations ? { ...integrations, ...fields.integrations } : undefined },
      }));
      await ingest(source.id, calls, true, sentAt);
      return { success: true as const };
    });
  }
};
