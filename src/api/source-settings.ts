import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from '../config';
import type { Store } from '../store/types';
import { ApiError } from './errors';
import { limitedAddress } from './client-address';
import { ErrorReply } from './ingest-schema';
import { failureLimiter } from './rate-limiter';

/** How long browsers and proxies may keep a source's settings. */
const SETTINGS_MAX_AGE_SECONDS = 300;

/** Where a library fetches its source's settings: analytics-next `{cdnURL}/v1/projects/{writeKey}/settings`, the mobile libraries `https://{cdnHost}/projects/{writeKey}/settings` with cdnHost ending in /v1. */
export const SOURCE_SETTINGS_PATH = '/v1/projects/:writeKey/settings';
export const isSourceSettingsPath = (path: string) => /^\/v1\/projects\/[^/]+\/settings$/.test(path);

/** Where this API is reached: the scheme, and host[:port] plus any path prefix, without the scheme (Segment's `apiHost` shape). */
export interface PublicEndpoint {
  protocol: 'http' | 'https';
  apiHost: string;
}

const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * PUBLIC_URL when set; otherwise the request's own protocol and Host (Fastify reads X-Forwarded-Proto
 * and -Host only when TRUST_PROXY trusts the hop). A Host that is no host name, address or port is
 * refused rather than echoed into what the library will send to.
 */
export function publicEndpoint(publicUrl: string, request: { protocol: string; host: string }): PublicEndpoint | { problem: string } {
  if (publicUrl) {
    const url = new URL(publicUrl);
    return { protocol: url.protocol === 'https:' ? 'https' : 'http', apiHost: `${url.host}${url.pathname.replace(/\/+$/, '')}/v1` };
  }
  if (!HOST.test(request.host)) return { problem: 'host: header must be a host name or IP address with an optional port (or set PUBLIC_URL)' };
  return { protocol: request.protocol === 'https' ? 'https' : 'http', apiHost: `${request.host}/v1` };
}

/**
 * How long, and by whom, a source's settings may be kept. Pages load them on every visit; a few
 * minutes of caching spares the store, and a changed source rarely matters sooner. When apiHost
 * comes from X-Forwarded-Host/-Proto (a trusted proxy, no PUBLIC_URL), a shared cache keyed on the
 * URL alone would hand one client's forged host to every visitor: such a reply is private and
 * varies on those headers.
 */
export function settingsCaching(config: Pick<Config, 'publicUrl' | 'trustProxy'>): { 'cache-control': string; vary?: string } {
  if (config.publicUrl || config.trustProxy === false) return { 'cache-control': `public, max-age=${SETTINGS_MAX_AGE_SECONDS}` };
  return { 'cache-control': `private, max-age=${SETTINGS_MAX_AGE_SECONDS}`, vary: 'X-Forwarded-Host, X-Forwarded-Proto' };
}

/**
 * A source's settings in Segment's CDN shape, reduced to what the libraries read to send here:
 * analytics-next's `integrations["Segment.io"]` (apiKey, apiHost, protocol) and the objects it and
 * analytics-swift/-kotlin expect to find. Nothing but the write key the caller already has: no
 * source id or name. `metrics.sampleRate: 0` keeps the libraries from reporting to Segment's API,
 * and no remote plugins, middleware or device-mode destinations are ever loaded.
 */
export function sourceSettings(writeKey: string, endpoint: PublicEndpoint) {
  return {
    integrations: {
      'Segment.io': { apiKey: writeKey, apiHost: endpoint.apiHost, protocol: endpoint.protocol, unbundledIntegrations: [], maybeBundledConfigIds: {} },
    },
    plan: { track: { __default: { enabled: true, integrations: {} } }, identify: { __default: { enabled: true } }, group: { __default: { enabled: true } } },
    edgeFunction: {},
    analyticsNextEnabled: true,
    middlewareSettings: {},
    enabledMiddleware: {},
    metrics: { sampleRate: 0 },
    legacyVideoPluginsEnabled: false,
    remotePlugins: [],
  };
}

const Settings = Type.Object({}, { additionalProperties: true });

/**
 * `GET /v1/projects/:writeKey/settings`: a page loads analytics-next with `cdnURL` pointing here (and
 * a mobile app sets `cdnHost`), and needs no Segment account. Unknown write key → 404. Logged at
 * warn only: the path carries the write key, which the request log would otherwise record.
 */
export const sourceSettingsRoutes: FastifyPluginAsync<{ store: Store; config: Pick<Config, 'publicUrl' | 'trustProxy' | 'ingestUnauthenticatedRateLimit' | 'ingestRateWindow'> }> = async (parent, { store, config }) => {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  // Unknown write keys count per client address, as on the ingestion routes: the route cannot be used to guess keys at speed.
  const perAddress = failureLimiter(config.ingestUnauthenticatedRateLimit, config.ingestRateWindow, 'requests for unknown write keys from this address');
  const caching = settingsCaching(config);
  app.get(
    SOURCE_SETTINGS_PATH,
    {
      logLevel: 'warn',
      schema: {
        params: Type.Object({ writeKey: Type.String({ minLength: 1, maxLength: 256 }) }),
        response: { 200: Settings, 400: ErrorReply, 404: ErrorReply, 429: ErrorReply },
      },
    },
    async (request: FastifyRequest<{ Params: { writeKey: string } }>, reply) => {
      const { writeKey } = request.params;
      const address = limitedAddress(request, config.trustProxy);
      void reply.header('cache-control', 'no-store');
      // A known key first, from memory: an address's guesses never refuse a valid key.
      const known = store.sources.knownWriteKey ? await store.sources.knownWriteKey(writeKey) : undefined;
      if (!known) await perAddress.refuseIfSpent(address);
      const source = known ?? (await store.sources.findByWriteKey(writeKey));
      if (!source) {
        await perAddress.count(address);
        throw new ApiError(404, 'unknown_write_key', 'writeKey: no source has this write key; settings are served only for the write key of an existing source');
      }
      const endpoint = publicEndpoint(config.publicUrl, request);
      if ('problem' in endpoint) throw new ApiError(400, 'invalid_request', endpoint.problem);
      void reply.header('cache-control', caching['cache-control']);
      // Appended: CORS may have said Vary: Origin already.
      if (caching.vary) void reply.header('vary', [reply.getHeader('vary'), caching.vary].filter(Boolean).join(', '));
      return sourceSettings(writeKey, endpoint);
    },
  );
};
