import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../config';
import type { Source, Store } from '../store/types';
import { unauthorized } from './errors';
import { limitedAddress } from './client-address';
import { failureLimiter, rateLimiter } from './rate-limiter';
import { bodyWriteKey, headerWriteKey } from './write-key';

const sources = new WeakMap<FastifyRequest, Source>();

/**
 * Who may send, and how often, for the ingestion routes of `app`. A request with a known write key
 * counts against its source's bucket (INGEST_RATE_LIMIT), so a noisy source gets 429s while others
 * carry on. A request without one, or with an unknown one, counts against its client address
 * (INGEST_UNAUTHENTICATED_RATE_LIMIT): a fresh random key per request cannot spray past the limit,
 * and once an address has used it up its requests are refused before any lookup, so a spray costs
 * the store nothing. A key the API knows to be valid (its write-key directory, kept in memory and
 * told of every source made or deleted: store/write-key-directory.ts) is answered before that limit
 * is consulted, so an honest neighbour behind the same address loses nothing. Behind proxies the address is the one TRUST_PROXY makes out (./client-address.ts).
 * A key in the Authorization header is checked as the request arrives, before its body is read;
 * a key in the body once the body is parsed, before validation, so floods of invalid requests count.
 * Returns how a route handler gets the source the request was authenticated as.
 */
export function guardIngestion(app: FastifyInstance, store: Store, config: Pick<Config, 'ingestRateLimit' | 'ingestRateWindow' | 'ingestUnauthenticatedRateLimit' | 'trustProxy'>) {
  const perSource = rateLimiter(config.ingestRateLimit, config.ingestRateWindow, 'for this write key');
  const perAddress = failureLimiter(config.ingestUnauthenticatedRateLimit, config.ingestRateWindow, 'requests without a valid write key from this address');

  // How long each request's write-key lookup took: the ingestion deadline counts it (ingest.ts).
  const lookups = new WeakMap<FastifyRequest, number>();

  const timed = <T>(request: FastifyRequest, lookup: Promise<T>): Promise<T> => {
    const started = Date.now();
    return lookup.finally(() => lookups.set(request, (lookups.get(request) ?? 0) + Date.now() - started));
  };

  async function authenticate(request: FastifyRequest, writeKey: string | undefined): Promise<void> {
    // A key known valid is answered from memory, before the address's count of unknown keys: a
    // valid key is never refused for what others behind the same address sent.
    const known = writeKey && store.sources.knownWriteKey ? await timed(request, store.sources.knownWriteKey(writeKey)) : undefined;
    if (known) {
      await perSource(known.id);
      sources.set(request, known);
      return;
    }
    const address = limitedAddress(request, config.trustProxy);
    await perAddress.refuseIfSpent(address);
    // Not known: unknown, or a source made a moment ago that the directory has not heard of yet.
    const source = writeKey ? await timed(request, store.sources.findByWriteKey(writeKey)) : undefined;
    if (!source) {
      await perAddress.count(address);
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

  return {
    sourceOf: (request: FastifyRequest): Source => {
      const source = sources.get(request);
      if (!source) throw unauthorized('missing write key');
      return source;
    },
    lookupMs: (request: FastifyRequest) => lookups.get(request) ?? 0,
  };
}
