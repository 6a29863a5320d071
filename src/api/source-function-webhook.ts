import { randomUUID } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyError, FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from '../config';
import { SOURCE_FUNCTION_RETRIES } from '../functions/source-retry';
import { decodeWebhookKey, SOURCE_FUNCTION_BODY_LIMIT, SOURCE_FUNCTION_PATH } from '../functions/source-webhook';
import { sealForRequest, type RawFunctionRequest, type SourceFunctionRequest } from '../messages/source-function-request';
import type { Keyring } from '../privacy/keyring';
import type { Deliveries } from '../ports';
import type { Store } from '../store/types';
import { ApiError, badRequest } from './errors';
import { ErrorReply } from './ingest-schema';
import { limitedAddress } from './client-address';
import { failureLimiter, rateLimiter } from './rate-limiter';

interface WebhookOptions {
  store: Store;
  deliveries: Deliveries;
  config: Pick<Config, 'ingestStartTimeout' | 'sourceFunctionRetryInitial' | 'sourceFunctionRetryMax' | 'ingestRateLimit' | 'ingestRateWindow' | 'ingestUnauthenticatedRateLimit' | 'trustProxy'>;
  /** Seals the raw request (undefined: PAYLOAD_ENCRYPTION=off, nothing sealed). */
  keyring?: Keyring;
}

/** Header values as one string each, as Segment's runtime hands them to `request.headers`. */
function headerText(request: FastifyRequest): Record<string, string> {
  return Object.fromEntries(
    Object.entries(request.headers)
      .filter(([, value]) => value !== undefined)
      .map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : String(value)]),
  );
}

/**
 * A source function's webhook, Segment's `<base>/functions?b=<base64 of sourceId::key>`: any body up
 * to 512 KiB, taken as it came. It is answered 200 only once the raw request is durably held: the
 * input of its own workflow (workflows/source-function.ts), sealed under a data key of its own when
 * payload keys are on. The workflow runs the function and ingests what it emits; the sender hears
 * nothing of that (Segment's source functions answer no custom response).
 */
export const sourceFunctionWebhookRoutes: FastifyPluginAsync<WebhookOptions> = async (parent, { store, deliveries, config, keyring }) => {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  // The ingestion routes' limits: each source's requests count against INGEST_RATE_LIMIT, and a
  // `b` of no source against its sender's address (INGEST_UNAUTHENTICATED_RATE_LIMIT), refused
  // before any lookup once spent, so a spray of made-up URLs costs the store nothing.
  const perSource = rateLimiter(config.ingestRateLimit, config.ingestRateWindow, 'for this source');
  const perAddress = failureLimiter(config.ingestUnauthenticatedRateLimit, config.ingestRateWindow, 'requests with a webhook URL of no source from this address');
  // Whatever the sender posts (JSON, a form, text) is the function's to read: kept as text.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: SOURCE_FUNCTION_BODY_LIMIT }, (_request, body, done) => done(null, body));
  app.setErrorHandler((error: FastifyError, _request, reply) => {
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return reply
        .code(413)
        .send({ code: 'request_too_large', message: `body: is larger than ${SOURCE_FUNCTION_BODY_LIMIT / 1024} KiB (${SOURCE_FUNCTION_BODY_LIMIT} bytes), the most a source function's webhook takes` });
    }
    // Everything else as every other route answers it (the app's handler).
    throw error;
  });

  app.post(
    SOURCE_FUNCTION_PATH,
    {
      bodyLimit: SOURCE_FUNCTION_BODY_LIMIT,
      schema: {
        description: "A source function's webhook (its `webhookUrl`): the request is recorded, then the function's `onRequest` runs on a worker and the calls it emits are ingested as the source's.",
        querystring: Type.Object({ b: Type.Optional(Type.String({ maxLength: 2048, description: "base64 of `sourceId::writeKey`, as the source's webhookUrl has it." })) }),
        response: { 200: Type.Object({ success: Type.Literal(true), requestId: Type.String() }), 400: ErrorReply, 404: ErrorReply, 413: ErrorReply, 429: ErrorReply, 503: ErrorReply },
      },
    },
    async (request) => {
      const address = limitedAddress(request, config.trustProxy);
      await perAddress.refuseIfSpent(address);
      const refuse = async (error: ApiError): Promise<never> => {
        await perAddress.count(address);
        throw error;
      };
      const decoded = decodeWebhookKey(request.query.b);
      if ('problem' in decoded) return refuse(badRequest(decoded.problem));
      const source = (await store.sources.knownWriteKey?.(decoded.writeKey)) ?? (await store.sources.findByWriteKey(decoded.writeKey));
      if (!source || source.id !== decoded.sourceId) return refuse(new ApiError(404, 'not_found', 'b: names no source with that key'));
      if (!source.function) return refuse(new ApiError(404, 'not_found', `b: source ${source.id} runs no source function`));
      await perSource(source.id);
      if (!deliveries.runSourceFunction) throw new ApiError(503, 'temporal_unavailable', 'source functions: this process starts no source function requests; retry later', { 'retry-after': '5' });
      const receivedAtMs = Date.now();
      const requestId = randomUUID();
      const raw: RawFunctionRequest = { headers: headerText(request), body: typeof request.body === 'string' ? request.body : '', url: `${request.protocol}://${request.host}${request.url}` };
      const input: SourceFunctionRequest = {
        requestId,
        sourceId: source.id,
        receivedAtMs,
        request: await sealForRequest(keyring ? store.dataKeys : undefined, requestId, raw),
        retry: { retries: SOURCE_FUNCTION_RETRIES, initialMs: config.sourceFunctionRetryInitial, maximumMs: config.sourceFunctionRetryMax },
      };
      try {
        await deliveries.runSourceFunction(input, receivedAtMs + config.ingestStartTimeout);
      } catch (err) {
        request.log.error({ err, sourceId: source.id }, 'could not start a source function request');
        throw new ApiError(503, 'temporal_unavailable', 'the request was not recorded: the workflow engine is unavailable; retry later', { 'retry-after': '5' });
      }
      return { success: true as const, requestId };
    },
  );
};
