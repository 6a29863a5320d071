import type { FastifyInstance } from 'fastify';
import { ingestRouteLabel, scrape, watchDestinations, type Metrics } from '../metrics';
import type { Store } from '../store/types';

/**
 * `GET /metrics` in Prometheus' text format, without auth like /health (no label carries a secret,
 * write key or URL; keep the path off the public internet at the proxy), and the count and latency
 * of every ingestion request, recorded once its reply is sent. Installed on the root instance so
 * the hook sees every route (ingestion, source settings, and `/v1/...` paths no route matched).
 */
export function serveMetricsRoute(app: FastifyInstance, metrics: Metrics, store: Pick<Store, 'sources' | 'destinations'>): void {
  // The API alone fills the names (a worker's scrape would repeat them, and a join wants one series each).
  watchDestinations(metrics, async () => (await Promise.all((await store.sources.list()).map((source) => store.destinations.listBySource(source.id)))).flat());
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    const { contentType, body } = await scrape(metrics);
    return reply.type(contentType).send(body);
  });
  app.addHook('onResponse', async (request, reply) => {
    // The route *pattern*: the URL of /v1/projects/<writeKey>/settings carries a write key.
    const route = ingestRouteLabel(request.routeOptions.url, request.url);
    if (route === undefined) return;
    metrics.ingestRequests.inc({ route, status: String(reply.statusCode) });
    metrics.ingestDuration.observe({ route }, reply.elapsedTime / 1000);
  });
}
