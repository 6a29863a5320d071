import { Agent, request } from 'undici';
import { classifyError, classifyResponse } from '../delivery/outcome';
import { parseRetryAfter } from '../delivery/retry-after';
import type { AttemptOutcome } from '../delivery/types';

/** Response bodies are not used; read at most this much so a chatty receiver cannot hold memory. */
const RESPONSE_BODY_CAP = 64 * 1024;

/**
 * One keep-alive pool per origin (undici's Agent keeps a pool per origin), shared by all attempts
 * in this worker. Certificates are verified (seed: self-signed endpoints are refused) and
 * redirects are never followed (undici's `request` does not follow them).
 */
export function createWebhookAgent(): Agent {
  return new Agent({ keepAliveTimeout: 10_000, connect: { rejectUnauthorized: true } });
}

export async function postWebhook(agent: Agent, url: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<AttemptOutcome> {
  try {
    const response = await request(url, {
      method: 'POST',
      headers,
      body,
      dispatcher: agent,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
    });
    await response.body.dump({ limit: RESPONSE_BODY_CAP }).catch(() => undefined);
    const retryAfter = response.headers['retry-after'];
    return classifyResponse(response.statusCode, parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, Date.now()));
  } catch (err) {
    const error = err as Error & { code?: unknown; cause?: { code?: unknown } };
    const code = [error.code, error.cause?.code, error.name].find((c): c is string => typeof c === 'string' && c !== 'Error');
    return classifyError(code, error.message, timeoutMs);
  }
}
