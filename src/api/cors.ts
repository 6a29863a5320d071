import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config';
import { INGEST_ROUTES } from './ingest-routes';
import { isSourceSettingsPath } from './source-settings';

const INGEST_PATHS = new Set(INGEST_ROUTES.map((route) => route.path));

/** The routes a web page may call from another origin: ingestion and source settings. Never /admin, /health or the API document. */
export function isBrowserPath(url: string): boolean {
  const path = url.split('?')[0];
  return INGEST_PATHS.has(path) || isSourceSettingsPath(path);
}

/** The codec server's routes (./codec.ts): any depth under /codec. */
export const isCodecPath = (url: string): boolean => url.split('?')[0].startsWith('/codec/');

/**
 * CORS for the browser routes only (CORS_ORIGINS: `*` or a list of exact origins), preflight and
 * the requests themselves; for the codec server, only the Temporal Web UIs of CODEC_CORS_ORIGINS,
 * with credentials (a UI may send a cookie or its access token). Decided per path rather than per
 * route because a preflight reaches the plugin's catch-all `OPTIONS *` route, whatever path it asks
 * about; elsewhere the plugin adds nothing and a preflight gets the usual 404.
 */
export async function allowBrowserOrigins(app: FastifyInstance, config: Pick<Config, 'corsOrigins' | 'codecCorsOrigins'>): Promise<void> {
  await app.register(cors, {
    hook: 'onRequest',
    // A preflight's own log line would carry the settings path, and with it a write key.
    logLevel: 'warn',
    delegator: (request, done) =>
      done(null, isCodecPath(request.url)
        ? {
            origin: config.codecCorsOrigins.length > 0 ? config.codecCorsOrigins : false,
            methods: ['POST'],
            // What the Web UI sends: X-Namespace always, Authorization when it passes its access token.
            allowedHeaders: ['Authorization', 'Content-Type', 'X-Namespace'],
            credentials: true,
            maxAge: 7_200,
            strictPreflight: false,
          }
        : isBrowserPath(request.url)
        ? {
            origin: config.corsOrigins,
            methods: ['GET', 'HEAD', 'POST'],
            // No allowedHeaders: the plugin allows the headers a preflight asks for. A page
            // with OpenTelemetry's fetch instrumentation asks for `traceparent, tracestate`; refused,
            // its analytics calls would be lost (test/integration/tracing.test.ts keeps it so).
            // Browsers cache the answer this long (Chromium caps it at 2 h): one preflight per page session, not per event.
            maxAge: 7_200,
            // A preflight without Origin is not refused with the plugin's text/plain 400; it simply gets the headers.
            strictPreflight: false,
          }
        : { origin: false }),
  });
}
