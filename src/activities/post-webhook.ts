import { Agent, request } from 'undici';
import type { Cidr } from '../delivery/egress';
import { classifyError, classifyResponse } from '../delivery/outcome';
import { parseRetryAfter } from '../delivery/retry-after';
import { DELIVERY_DIRECTIVE_HEADER, parseDeliveryDirective } from '../delivery/delivery-directive';
import type { AttemptOutcome } from '../delivery/types';
import type { TlsSettings } from '../mappings/types';
import { dnsBudget } from '../delivery/webhook-dns';
import { egressConnector } from './egress-connector';
import { webhookResolver } from './webhook-resolver';
import { stallAwareTimeout } from './stall-aware-timeout';

/**
 * Response bodies are not used: at most this much is read and dropped, then the connection is cut,
 * so a receiver that streams an endless body holds neither memory nor the attempt.
 */
export const RESPONSE_BODY_CAP = 8 * 1024;

/**
 * One keep-alive pool per origin (undici's Agent keeps a pool per origin), shared by all attempts
 * in this worker. Every new connection goes through the egress check (resolve, check, connect to
 * the checked address). Certificates are verified (seed: self-signed webhooks are refused) and
 * redirects are never followed (undici's `request` does not follow them). Host names resolve within
 * half of `deliveryTimeoutMs` (delivery/webhook-dns.ts).
 */
export function createWebhookAgent(egressAllowlist: Cidr[], deliveryTimeoutMs: number, tls?: TlsSettings): Agent {
  const resolve = webhookResolver({ budget: dnsBudget(deliveryTimeoutMs) });
  // A destination's client certificate (mutual TLS) is presented on its own pool's connections.
  const connectOptions = { rejectUnauthorized: true, ...(tls && { cert: tls.certificate, key: tls.privateKey }) };
  return new Agent({ keepAliveTimeout: 10_000, connect: egressConnector(egressAllowlist, connectOptions, resolve) });
}

/** `method`: an actions destination's mappings may PUT or PATCH; a webhook always POSTs. */
export async function postWebhook(agent: Agent, url: string, headers: Record<string, string>, body: string, timeoutMs: number, method: 'POST' | 'PUT' | 'PATCH' = 'POST'): Promise<AttemptOutcome> {
  // One clock for the whole attempt, and one that tells a receiver's silence from this worker's
  // own stall: undici's header and body timers are off, since after a stall they would fire before
  // the answer waiting in the socket is read.
  const deadline = stallAwareTimeout(timeoutMs);
  try {
    const response = await request(url, {
      method,
      headers,
      body,
      dispatcher: agent,
      headersTimeout: 0,
      bodyTimeout: 0,
      signal: deadline.signal,
    });
    await response.body.dump({ limit: RESPONSE_BODY_CAP }).catch(() => undefined);
    const retryAfter = response.headers['retry-after'];
    const retryAfterMs = parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, Date.now());
    return classifyResponse(response.statusCode, retryAfterMs, parseDeliveryDirective(response.headers[DELIVERY_DIRECTIVE_HEADER]));
  } catch (err) {
    const error = err as Error & { code?: unknown; cause?: { code?: unknown } };
    const code = [error.code, error.cause?.code, error.name].find((c): c is string => typeof c === 'string' && c !== 'Error');
    return classifyError(code, error.message, timeoutMs);
  } finally {
    deadline.clear();
  }
}
