import type { FastifyPluginAsync } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { Deliveries } from '../ports';

const Health = Type.Object({
  status: Type.String(),
  temporal: Type.Boolean(),
  /** Every watched task queue has a worker that polled within HEALTH_POLLER_WINDOW. */
  worker: Type.Boolean(),
  taskQueues: Type.Array(Type.Object({ name: Type.String(), workers: Type.Integer(), lastPollAt: Type.Optional(Type.String({ format: 'date-time' })) })),
});

/** Ready only when the API runs, Temporal answers and live workers poll both delivery task queues (ingested calls, Personas syncs). */
export const healthRoutes: FastifyPluginAsync<{ deliveries: Deliveries }> = async (app, { deliveries }) => {
  app.get('/health', { schema: { response: { 200: Health, 503: Health } } }, async (_request, reply) => {
    const { temporal, worker, taskQueues } = await deliveries.health();
    const ok = temporal && worker;
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ok' : 'unavailable', temporal, worker, taskQueues });
  });
};
