import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import ipaddr from 'ipaddr.js';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from '../config';
import type { Call } from '../messages/call';
import { ingestCalls } from '../messages/ingest-calls';
import { ingestDependencies } from '../messages/ingest-dependencies';
import type { ForwardingJob } from '../messages/forwarding-job';
import type { Keyring } from '../privacy/keyring';
import type { Store } from '../store/types';
import type { Deliveries } from '../ports';
import { ApiError, badRequest } from './errors';
import { acceptGzipBodies } from './gzip';
import { parseAsStrictJson } from './json-body';
import { Accepted, BatchBody, CallBody, ErrorReply } from './ingest-schema';
import { guardIngestion } from './ingest-guard';
import { INGEST_ROUTES } from './ingest-routes';
import type { Metrics } from '../metrics';
import { traceIngestRequest } from '../tracing/ingest-spans';

interface IngestOptions {
  store: Store;
  deliveries: Deliveries;
  config: Config;
  metrics?: Metrics;
  /** Seals user bodies under their subjects' data keys (undefined: PAYLOAD_ENCRYPTION=off, nothing sealed). */
  keyring?: Keyring;
}

/** The sender's address as Fastify resolves it under TRUST_PROXY; an IPv4 client of a dual-stack socket shows as IPv4. */
function clientAddress(request: FastifyRequest): string | undefined {
  if (!request.ip) return undefined;
  return ipaddr.isValid(request.ip) ? ipaddr.process(request.ip).toString() : request.ip;
}

const responses = { 200: Accepted, 400: ErrorReply, 401: ErrorReply, 429: ErrorReply, 503: ErrorReply };

/**
 * Segment Tracking API over HTTP: the routes of INGEST_ROUTES, each turning its body
 * into calls for the message path (src/messages/ingest-calls.ts). A 200 means Temporal holds a
 * workflow for every message of the request; otherwise the client gets an error and retries.
 */
export const ingestRoutes: FastifyPluginAsync<IngestOptions> = async (parent, { store, deliveries, config, metrics, keyring }) => {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  acceptGzipBodies(app);
  // The overview's counts and the violations, flushed like webhook health; the last ones are written at close.
  // A tracking plan's forwarded calls go as durable jobs, within the request's start timeout.
  const forward = deliveries.forward?.bind(deliveries);
  const wiring = ingestDependencies({
    store,
    deliveries,
    config,
    metrics,
    keyring,
    logger: app.log,
    ...(forward && { startForwarding: (job: ForwardingJob) => forward(job, Date.now() + config.ingestStartTimeout) }),
  });
  app.addHook('onClose', () => wiring.close());
  const dependencies = wiring.dependencies;

  const { sourceOf, lookupMs } = guardIngestion(app, store, config);

  // Segment's browser library posts JSON as text/plain (a CORS "simple" type); Kotlin's batches come so too.
  parseAsStrictJson(app, 'text/plain');

  async function ingest(request: FastifyRequest, route: string, sourceId: string, calls: Call[], inBatch: boolean, batchSentAt?: string): Promise<void> {
    const receivedAtMs = Date.now();
    // INGEST_START_TIMEOUT counts the write-key lookup before the handler too: it waits on the store
    // (up to the pool's 5 s connect timeout while PostgreSQL restarts), and without it a request
    // could run past the sender's patience. Not the body's transfer: a slow link is no slow store.
    const budgetFromMs = receivedAtMs - lookupMs(request);
    // The request's span continues the sender's trace (undefined while tracing is off).
    const trace = traceIngestRequest(route, sourceId, request.headers);
    let statusCode = 500;
    try {
      const result = await ingestCalls(dependencies, { sourceId, calls, receivedAtMs, budgetFromMs, batchSentAt, inBatch, ip: clientAddress(request), ...(trace && { trace }) });
      statusCode = result.status === 'rejected' ? 400 : result.status === 'unavailable' ? 503 : 200;
      if (result.status === 'rejected') throw badRequest(result.problem);
      if (result.status === 'unavailable') {
        app.log.error({ err: result.reason, sourceId }, 'could not start deliveries');
        throw new ApiError(503, 'temporal_unavailable', 'messages were not accepted: the workflow engine is unavailable; retry later', { 'retry-after': '5' });
      }
    } finally {
      trace?.end(statusCode);
    }
  }

  for (const route of INGEST_ROUTES) {
    if (route.kind === 'call') {
      const { type } = route;
      app.post(route.path, { schema: { body: CallBody, response: responses } }, async (request) => {
        const source = sourceOf(request);
        await ingest(request, route.path, source.id, [{ type, fields: request.body }], false);
        return { success: true as const };
      });
      continue;
    }
    app.post(route.path, { schema: { body: BatchBody, response: responses } }, async (request) => {
      const source = sourceOf(request);
      const { batch, context, integrations, sentAt } = request.body;
      // Batch-level context and integrations apply to every message; a message's own keys win.
      const calls = batch.map((fields): Call => ({
        type: fields.type,
        fields: { ...fields, context: { ...context, ...fields.context }, integrations: integrations || fields.integrations ? { ...integrations, ...fields.integrations } : undefined },
      }));
      await ingest(request, route.path, source.id, calls, true, sentAt);
      return { success: true as const };
    });
  }
};
