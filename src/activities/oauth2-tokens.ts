import { createHash } from 'node:crypto';
import { request, type Agent } from 'undici';
import { accessTokenOf, tokenRequestBody, tokenReuseMs } from '../delivery/outbound-auth';
import { BoundedMap } from '../bounded-map';
import type { OutboundAuth } from '../mappings/types';

type OAuth2 = Extract<OutboundAuth, { type: 'oauth2' }>;
export type TokenAnswer = { token: string } | { reason: string };

/** A token endpoint's answer is read up to this much: a token response is small. */
const TOKEN_BODY_CAP = 64 * 1024;
/** Tokens kept per worker: one per OAuth2 setting in use; past this many the least recently used is fetched again when next asked. */
const MAX_TOKENS = 10_000;

/**
 * OAuth2 client-credentials tokens, fetched by the worker and shared by all its requests
 * until shortly before they expire; concurrent requests for the same client wait for one fetch.
 * Keyed by a hash of the whole auth setting, so changed credentials fetch a new token at once. The
 * token endpoint is reached through the same egress-checked pool as the receivers (no redirects,
 * certificates verified). Tokens live in this process's memory only.
 */
export class OAuth2Tokens {
  private readonly cached = new BoundedMap<string, { token: string; untilMs: number }>(MAX_TOKENS);
  private readonly fetching = new Map<string, Promise<TokenAnswer>>();

  constructor(private readonly agent: Agent) {}

  private static keyOf(auth: OAuth2): string {
    return createHash('sha256').update(JSON.stringify([auth.tokenUrl, auth.clientId, auth.clientSecret, auth.scope ?? '', auth.audience ?? ''])).digest('hex');
  }

  /** A token for this client: the cached one while it is fresh, else one fetched now (within `timeoutMs`). */
  async token(auth: OAuth2, timeoutMs: number, nowMs = Date.now()): Promise<TokenAnswer> {
    const key = OAuth2Tokens.keyOf(auth);
    const cached = this.cached.get(key);
    if (cached && cached.untilMs > nowMs) return { token: cached.token };
    let pending = this.fetching.get(key);
    if (!pending) {
      pending = this.fetch(auth, timeoutMs).then((answer) => {
        if ('token' in answer) {
          this.pruneExpired(Date.now());
          this.cached.set(key, { token: answer.token, untilMs: Date.now() + answer.reuseMs });
        }
        return 'token' in answer ? { token: answer.token } : answer;
      });
      this.fetching.set(key, pending);
      // The caller awaits `pending` and sees its error; this derived promise only clears the entry,
      // and must not leave a rejection unhandled (which ends a Node process).
      pending.finally(() => this.fetching.delete(key)).catch(() => undefined);
    }
    return pending;
  }

  /** Tokens held now, fresh or not yet pruned. */
  get held(): number {
    return this.cached.size;
  }

  /**
   * Drops every token past its reuse time: the key includes the secret, so a rotated or
   * removed setting's entry is never asked for again and would otherwise stay for the process's life.
   * Run on each new token, so the cache holds at most the tokens fresh at the last fetch.
   */
  private pruneExpired(nowMs: number): void {
    for (const [key, entry] of this.cached) if (entry.untilMs <= nowMs) this.cached.delete(key);
  }

  /** The receiver refused this token (401): forget it, unless another request already replaced it. */
  invalidate(auth: OAuth2, token: string): void {
    const key = OAuth2Tokens.keyOf(auth);
    if (this.cached.get(key)?.token === token) this.cached.delete(key);
  }

  private async fetch(auth: OAuth2, timeoutMs: number): Promise<{ token: string; reuseMs: number } | { reason: string }> {
    try {
      const response = await request(auth.tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: tokenRequestBody(auth),
        dispatcher: this.agent,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal: AbortSignal.timeout(timeoutMs),
      });
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of response.body) {
        size += (chunk as Buffer).length;
        if (size > TOKEN_BODY_CAP) {
          response.body.destroy();
          return { reason: `oauth2 token endpoint: answer larger than ${TOKEN_BODY_CAP} bytes` };
        }
        chunks.push(chunk as Buffer);
      }
      const answer = accessTokenOf(response.statusCode, Buffer.concat(chunks).toString('utf8'));
      return 'token' in answer ? { token: answer.token, reuseMs: tokenReuseMs(answer.expiresIn) } : { reason: `oauth2 token endpoint: ${answer.reason}` };
    } catch (err) {
      const error = err as Error & { code?: unknown };
      return { reason: `oauth2 token endpoint: ${typeof error.code === 'string' ? `${error.code}: ` : ''}${error.message}` };
    }
  }
}
