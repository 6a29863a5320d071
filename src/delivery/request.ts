import { signBody } from './signature';

export const USER_AGENT = 'Switchyard/1.0';

/**
 * Headers of one webhook request (seed: Endpoints). The webhook's static headers go first so the
 * ones Switchyard owns — content type, product token, signature — cannot be overridden by them.
 */
export function webhookRequestHeaders(staticHeaders: Record<string, string>, sharedSecret: string | null, body: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(staticHeaders)) headers[name.toLowerCase()] = value;
  headers['content-type'] = 'application/json';
  headers['user-agent'] = USER_AGENT;
  delete headers['x-signature'];
  if (sharedSecret) headers['x-signature'] = signBody(sharedSecret, body);
  return headers;
}
