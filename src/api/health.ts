import type { FastifyPluginAsync } from 'fastify';
import { Type } from '@sinclair/typebox';
import { coalesced } from '../coalesced';
import type { Deliveries } from '../ports';
import type { Store } from '../store';
import { VERSION } from '../version';
import { storeAnswers } from './store-answers';
import { READING_FRESH_MS } from './system-status';

const Health = Type.Object({
  status: Type.String({ description: '`ok` while this API can take ingestion (its store and Temporal answer), `unavailable` when it cannot' }),
  /** Switchyard's version (package.json, CHANGELOG.md). */
  version: Type.String(),
});

/**
 * What a load balancer reads, without auth: 200 while this process can take ingestion, which needs
 * only its store and Temporal's frontend, whatever the workers or search attributes are doing (a
 * worker outage must not take the APIs out of rotation: calls wait in Temporal for a worker). The
 * reply says nothing about the deployment (no task queue, worker count or namespace); the deep view
 * is GET /admin/status.
 */
export const healthRoutes: FastifyPluginAsync<{ deliveries: Deliveries; store: Store }> = async (app, { deliveries, store }) => {
  const takesIngestion = coalesced(async () => (await Promise.all([deliveries.reachable(), storeAnswers(store)])).every(Boolean), READING_FRESH_MS);
  app.get('/health', { schema: { response: { 200: Health, 503: { ...Health, description: 'The store or Temporal does not answer: this API cannot take ingestion' } } } }, async (_request, reply) => {
    const ok = await takesIngestion();
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ok' : 'unavailable', version: VERSION });
  });
};
