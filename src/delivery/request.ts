import { signBody } from './signature';
import { standardWebhookHeaders } from './standard-webhooks';
import { USER_AGENT } from '../version';

/**
 * Headers every request to a webhook sets itself: a static header of one of these names would break
 * signing or framing, so configuration refuses them (webhook-rules.ts) and a request drops them.
 */
export const HEADERS_SET_BY_SWITCHYARD: ReadonlySet<string> = new Set([
  'content-type',
  'content-length',
  'user-agent',
  'host',
  'x-signature',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
  // Names the replay that sent a request; a static header must not pretend to.
  'x-switchyard-replay',
]);

/**
 * Headers of one webhook request (seed: Endpoints, i.e. webhook URLs). The webhook's static headers go first so the
 * ones Switchyard owns — content type, product token, signature — cannot be overridden by them.
 */
export function webhookRequestHeaders(
  staticHeaders: Record<string, string>,
  sharedSecret: string | null,
  body: string,
  standard?: { secrets: string[]; id: string; timestampSeconds: number },
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(staticHeaders)) {
    if (!HEADERS_SET_BY_SWITCHYARD.has(name.toLowerCase())) headers[name.toLowerCase()] = value;
  }
  headers['content-type'] = 'application/json';
  headers['user-agent'] = USER_AGENT;
  if (sharedSecret) headers['x-signature'] = signBody(sharedSecret, body);
  if (standard && standard.secrets.length > 0) Object.assign(headers, standardWebhookHeaders(standard.secrets, standard.id, standard.timestampSeconds, body));
  return headers;
}
