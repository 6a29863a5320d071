import { randomUUID } from 'node:crypto';
import rateLimit from '@fastify/rate-limit';
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { deliveryPolicy, type Config } from '../config';
import { isIntegrationEnabled } from '../delivery/integrations';
import { toWebhookMessage } from '../delivery/payload';
import { profileUpdates } from '../personas/profile-updates';
import type { CallType, DeliveryInput } from '../delivery/types';
import type { Store } from '../store/types';
import type { Deliveries } from './deliveries';
import { ApiError, badRequest } from './errors';
import { acceptGzipBodies } from './gzip';
import { Accepted, BatchBody, CallBody, ErrorReply } from './ingest-schema';
import { acceptMessage, messageProblem, type RawMessage } from './message-rules';
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
 * Segment Tracking API: one route per call type plus batch/import. A 200 means Temporal holds a
 * workflow for every message of the request; otherwise the client gets an error and retries.
 */
export const ingestRoutes: FastifyPluginAsync<IngestOptions> = async (parent, { store, deliveries, config }) => {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  acceptGzipBodies(app);
  const policy = deliveryPolicy(config);

  /**
   * While Temporal is unreachable the client library keeps retrying a start for tens of seconds;
   * the sender should hear 503 long before its own timeout instead. Past the deadline no call is
   * retried and no new start begins; one that landed in time is found by id on the sender's retry,
   * so nothing is delivered twice.
   */
  function withinStartTimeout(start: (deadline: number) => Promise<void>): Promise<void> {
    const starting = start(Date.now() + config.ingestStartTimeout);
    starting.catch(() => undefined);
    // The client may be between retries at the deadline; the sender hears 503 on time regardless.
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`workflow starts not confirmed within ${formatDuration(config.ingestStartTimeout)}`)), config.ingestStartTimeout);
    });
    return Promise.race([starting, timedOut]).finally(() => clearTimeout(timer));
  }

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

  async function ingest(sourceId: string, calls: { raw: RawMessage; type: CallType }[], inBatch: boolean, batchSentAt?: string): Promise<void> {
    const receivedAtMs = Date.now();
    const problems = calls.map(({ raw, type }, i) => messageProblem(raw, type, inBatch ? `batch[${i}].` : ''));
    const problem = problems.find(Boolean);
    if (problem) throw badRequest(problem);

    // Personas profiles: traits, events and aliases of the whole request in one SQLite transaction.
    await store.personas.profiles.record(sourceId, profileUpdates(calls, receivedAtMs, batchSentAt));
    const destinationIds = await store.destinations.listEnabledIds(sourceId);
    const inputs: DeliveryInput[] = [];
    for (const { raw, type } of calls) {
      if (destinationIds.length === 0 || !isIntegrationEnabled(raw.integrations as Record<string, unknown> | undefined)) continue;
      const message = acceptMessage(raw, type, receivedAtMs, batchSentAt, randomUUID);
      inputs.push({ sourceId, messageId: message.messageId, type, userId: message.userId, destinationIds, message: toWebhookMessage(message), policy });
    }
    try {
      await withinStartTimeout((deadline) => deliveries.start(inputs, deadline));
    } catch (err) {
      app.log.error({ err: (err as Error).message, sourceId }, 'could not start deliveries');
      throw new ApiError(503, 'temporal_unavailable', 'messages were not accepted: the workflow engine is unavailable; retry later', { 'retry-after': '5' });
    }
  }

  for (const type of ['identify', 'track', 'page', 'screen', 'group', 'alias'] as const) {
    app.post(`/v1/${type}`, { schema: { body: CallBody, response: responses } }, async (request) => {
      const source = await authenticateSource(request, store);
      await ingest(source.id, [{ raw: request.body as RawMessage, type }], false);
      return { success: true as const };
    });
  }

  for (const path of ['/v1/batch', '/v1/import']) {
    app.post(path, { schema: { body: BatchBody, response: responses } }, async (request) => {
      const source = await authenticateSource(request, store);
      const { batch, context, integrations, sentAt } = request.body;
      // Batch-level context and integrations apply to every message; a message's own keys win.
      const calls = batch.map((m) => ({
        raw: { ...m, context: { ...context, ...m.context }, integrations: integrations || m.integrations ? { ...integrations, ...m.integrations } : undefined } as RawMessage,
        type: m.type,
      }));
      await ingest(source.id, calls, true, sentAt);
      return { success: true as const };
    });
  }
};
