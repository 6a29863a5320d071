import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import { allowedConstantsRule, FORMAT_EXAMPLES, knownProperties, nearestField } from './field-hints';
import { MAX_BATCH_BYTES } from '../messages/call-rules';
import { pathRule } from '../rules/safe-path';
import { isStoreUnavailable } from '../store/unavailable';

/** What a sender hears to wait while the store is away: PostgreSQL restarts in seconds. */
const STORE_RETRY_AFTER_SECONDS = 2;

/**
 * Every error reply is `{code, message}`: Segment's clients read `code`, and the message names
 * the field and the rule so a person can fix the request without reading our source.
 */
export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const badRequest = (message: string) => new ApiError(400, 'invalid_request', message);
/** A search by a payload field without payloads:read: whether anything matches would say what a body carries. */
export const payloadQuestion = (field: string, what: string) =>
  new ApiError(403, 'forbidden', `${field}: searching by ${what} needs the payloads:read scope (whether anything matches says what a body carries)`);
export const notFound = (what: string) => new ApiError(404, 'not_found', `${what} not found`);
export const unauthorized = (message: string) => new ApiError(401, 'unauthorized', message);

/** JSON pointer of an Ajv error as a readable field path: `/webhooks/0/url` → `webhooks[0].url`. */
function fieldPath(instancePath: string, missing?: string): string {
  const parts = instancePath.split('/').filter(Boolean);
  if (missing) parts.push(missing);
  return parts.reduce((acc, part) => (/^\d+$/.test(part) ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part), '');
}

/** An unknown field, with the known one nearest to it when there is one. */
function unknownFieldRule(extra: string, request: FastifyRequest, context: string | undefined, schemaPath: string): string {
  const schema = context ? (request.routeOptions.schema as Record<string, unknown> | undefined)?.[context] : undefined;
  const nearest = nearestField(extra, knownProperties(schema, schemaPath));
  return nearest ? `is not a known field; did you mean ${nearest}?` : 'is not a known field';
}

/** A format error with an example of the format (`since: must match format "date-time", e.g. 2026-11-28T10:00:00Z`). */
function withExample(error: { keyword: string; params: Record<string, unknown>; message?: string }): string | undefined {
  const format = error.keyword === 'format' ? error.params.format : undefined;
  const example = typeof format === 'string' && Object.hasOwn(FORMAT_EXAMPLES, format) ? FORMAT_EXAMPLES[format] : undefined;
  return example ? `${error.message}, e.g. ${example}` : error.message;
}

export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    if (error instanceof ApiError) {
      return reply.code(error.statusCode).headers(error.headers).send({ code: error.code, message: error.message });
    }
    if (error.validation && error.validation.length > 0) {
      const first = error.validation[0];
      const missing = (first.params as { missingProperty?: string }).missingProperty;
      // Ajv reports an unknown property at its parent object; name the property itself.
      const extra = (first.params as { additionalProperty?: string }).additionalProperty;
      const field = fieldPath(first.instancePath, missing ?? extra) || error.validationContext || 'request';
      const allowed = (first.params as { allowedValues?: unknown[] }).allowedValues;
      // A key a schema refuses by name (propertyNames): say which key, and for a path into a prototype why.
      const key = (first as { propertyName?: string }).propertyName;
      const keyRule = key === undefined ? undefined : (pathRule(key) ?? `key ${JSON.stringify(key)} ${first.message}`);
      const rule = keyRule ?? (missing ? 'is required' : extra ? unknownFieldRule(extra, request, error.validationContext, first.schemaPath) : allowed ? `${first.message}: ${allowed.join(', ')}` : (allowedConstantsRule(error.validation) ?? withExample(first)));
      return reply.code(400).send({ code: 'invalid_request', message: `${field}: ${rule}` });
    }
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      // Seed: a request over the limit is a 400 like every other broken rule, with a stable code.
      return reply.code(400).send({ code: 'request_too_large', message: `body: is larger than ${MAX_BATCH_BYTES / 1024} KB (${MAX_BATCH_BYTES} bytes), the most one request may carry; send fewer messages per request` });
    }
    if (isStoreUnavailable(error)) {
      // Not a bug: the database is restarting or unreachable. Retryable, like Temporal being away;
      // the log names the error's code, never the database URL.
      request.log.warn({ code: (error as { code?: string }).code, reason: error.message }, 'store unavailable');
      return reply
        .code(503)
        .header('retry-after', String(STORE_RETRY_AFTER_SECONDS))
        .send({ code: 'store_unavailable', message: `the settings store is unavailable; retry after ${STORE_RETRY_AFTER_SECONDS} s` });
    }
    const status = error.statusCode && error.statusCode >= 400 ? error.statusCode : 500;
    if (status >= 500) {
      request.log.error({ err: error }, 'request failed');
      return reply.code(status).send({ code: 'internal_error', message: 'internal error; retry later' });
    }
    // Fastify's own 4xx (bad JSON, unsupported media type) keep their code as ours.
    return reply.code(status).send({ code: (error.code ?? 'invalid_request').toLowerCase(), message: error.message });
  });
  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send({ code: 'not_found', message: `no route ${request.method} ${request.url.split('?')[0]}` }),
  );
}
