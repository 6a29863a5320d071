import type { FastifyPluginAsync } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { Deliveries } from '../ports';

const Health = Type.Object({ status: Type.String(), temporal: Type.Boolean(), worker: Type.Boolean() });

/** Ready only when the API runs, Temporal answers and a worker polls the delivery task queue. */
export const healthRoutes: FastifyPluginAsync<{ deliveries: Deliveries }> = async (app, { deliveries }) => {
  app.get('/health', { schema: { response: { 200: Health, 503: Health } } }, async (_request, reply) => {
    const { temporal, worker } = await deliveries.health();
    const ok = temporal && worker;
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ok' : 'unavailable', temporal, worker });
  });
};
