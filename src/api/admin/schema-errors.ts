import type { FastifySchemaValidationError } from 'fastify';
import { badRequest } from '../errors';
import { TOO_MANY_HEADERS, TOO_MANY_WEBHOOKS } from '../../delivery/webhook-rules';

const WEBHOOKS = /^\/webhooks$/;
const HEADERS = /^\/webhooks\/(\d+)\/headers$/;

/**
 * The schemas declare the seed limits (maxItems, maxProperties) so the API doc shows them, but
 * Ajv words them as "must NOT have more than 5 items". This gives those two the seed's wording;
 * every other validation error goes on to the shared handler unchanged.
 */
export function seedLimitMessages(errors: FastifySchemaValidationError[], dataVar: string): Error {
  const first = errors[0];
  if (dataVar === 'body' && first) {
    if (first.keyword === 'maxItems' && WEBHOOKS.test(first.instancePath)) {
      return badRequest(`webhooks: ${TOO_MANY_WEBHOOKS}`);
    }
    const headers = first.keyword === 'maxProperties' ? HEADERS.exec(first.instancePath) : null;
    if (headers) return badRequest(`webhooks[${headers[1]}].headers: ${TOO_MANY_HEADERS}`);
  }
  return new Error(first?.message ?? 'invalid request');
}
