import type { FastifyInstance, FastifyRequest } from 'fastify';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { Config } from '../config';
import { formatDuration } from '../delivery/duration';
import type { Source, Store } from '../store/types';
import { ApiError, unauthorized } from './errors';
import { bodyWriteKey, headerWriteKey } from './write-key';

const sources = new WeakMap<FastifyRequest, Source>();

/** One bucket family: `points` requests per window, a 429 naming the limit beyond it. */
function limiter(points: number, windowMs: number, what: string) {
  if (points <= 0) return async () => undefined;
  const buckets = new RateLimiterMemory({ points, duration: windowMs / 1000 });
  return async (key: string) => {
    try {
      await buckets.consume(key);
    } catch (refused) {
      if (!(refused instanceof RateLimiterRes)) throw refused;
      const seconds = Math.max(1, Math.ceil(refused.msBeforeNext / 1000));
      throw new ApiError(429, 'rate_limited', `too many requests ${what} (at most ${points} per ${formatDuration(windowMs)}); retry in ${seconds} second${seconds === 1 ? '' : 's'}`, {
        'retry-after': String(seconds),
      });
    }
  };
}

/**
 * Who may send, and how often, for the ingestion routes of `app`. A request with a known write key
 * counts against its source's bucket (INGEST_RATE_LIMIT), so a noisy source gets 429s while others
 * carry on. A request without one, or with an unknown one, counts against its client address
 * (INGEST_UNAUTHENTICATED_RATE_LIMIT): a fresh random key per request cannot spray past the limit.
 * A key in the Authorization header is checked as the request arrives, before its body is read;
 * a key in the body once the body is parsed, before validation, so floods of invalid requests count.
 * Returns how a route handler gets the source the request was authenticated as.
 */
export function guardIngestion(app: FastifyInstance, store: Store, config: Pick<Config, 'ingestRateLimit' | 'ingestRateWindow' | 'ingestUnauthenticatedRateLimit'>) {
  const perSource = limiter(config.ingestRateLimit, config.ingestRateWindow, 'for this write key');
  const perAddress = limiter(config.ingestUnauthenticatedRateLimit, config.ingestRateWindow, 'without a valid write key from this address');

  async function authenticate(request: FastifyRequest, writeKey: string | undefined): Promise<void> {
    const source = writeKey ? await store.sources.findByWriteKey(writeKey) : undefined;
    if (!source) {
      await perAddress(request.ip);
      throw unauthorized(writeKey ? 'unknown write key' : 'missing write key: send HTTP Basic auth with the write key as username, or writeKey in the body');
    }
    await perSource(source.id);
    sources.set(request, source);
  }

  app.addHook('onRequest', async (request) => {
    const writeKey = request.method === 'POST' ? headerWriteKey(request) : undefined;
    if (writeKey) await authenticate(request, writeKey);
  });
  app.addHook('preValidation', async (request) => {
    if (request.method === 'POST' && !sources.has(request)) await authenticate(request, bodyWriteKey(request));
  });

  return (request: FastifyRequest): Source => {
    const source = sources.get(request);
    if (!source) throw unauthorized('missing write key');
    return source;
  };
}
