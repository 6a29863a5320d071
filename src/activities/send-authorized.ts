import type { Agent } from 'undici';
import { staticAuthorization } from '../delivery/outbound-auth';
import type { AttemptOutcome } from '../delivery/types';
import type { MappingMethod, TlsSettings } from '../mappings/types';
import type { Destination } from '../store/types';
import type { OAuth2Tokens } from './oauth2-tokens';
import type { postWebhook } from './post-webhook';

/** The worker's outbound means: an HTTP pool per client certificate (webhook-agents.ts) and its OAuth2 token cache. */
export interface Outbound {
  agentFor(tls: TlsSettings | null): Agent;
  tokens?: OAuth2Tokens;
}

interface OutgoingRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  method: MappingMethod;
}

/**
 * One request with the destination's outbound authentication, through the pool of its
 * client certificate. Bearer and basic set Authorization (over a static header of that name). OAuth2
 * takes the worker's cached token; a 401 answer drops it, fetches a new one and sends the request
 * once more; a token endpoint that fails is a retryable outcome with its own reason. Token fetch
 * and request share the attempt's timeout.
 */
export async function sendAuthorized(destination: Pick<Destination, 'auth' | 'tls'>, request: OutgoingRequest, timeoutMs: number, outbound: Outbound, post: typeof postWebhook): Promise<AttemptOutcome> {
  const agent = outbound.agentFor(destination.tls);
  const { url, headers, body, method } = request;
  const auth = destination.auth;
  if (auth?.type !== 'oauth2') {
    const authorization = staticAuthorization(auth);
    return post(agent, url, authorization ? { ...headers, authorization } : headers, body, timeoutMs, method);
  }
  if (!outbound.tokens) return { kind: 'retry', reason: 'oauth2: this worker has no token cache' };
  const deadline = Date.now() + timeoutMs;
  const left = () => Math.max(1, deadline - Date.now());
  let answer = await outbound.tokens.token(auth, timeoutMs);
  if ('reason' in answer) return { kind: 'retry', reason: answer.reason };
  let outcome = await post(agent, url, { ...headers, authorization: `Bearer ${answer.token}` }, body, left(), method);
  if (outcome.kind === 'permanent' && outcome.status === 401) {
    outbound.tokens.invalidate(auth, answer.token);
    answer = await outbound.tokens.token(auth, left());
    if ('reason' in answer) return { kind: 'retry', reason: answer.reason };
    outcome = await post(agent, url, { ...headers, authorization: `Bearer ${answer.token}` }, body, left(), method);
  }
  return outcome;
}
