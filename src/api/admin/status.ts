import type { FastifyPluginAsync } from 'fastify';
import { Type } from '@sinclair/typebox';
import { coalesced } from '../../coalesced';
import type { Deliveries } from '../../ports';
import type { Store } from '../../store/types';
import { VERSION } from '../../version';
import { STORE_AWAY, storeAnswers } from '../store-answers';
import { READING_FRESH_MS, systemStatus } from '../system-status';

const Status = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded'), Type.Literal('unavailable')], {
    description: '`ok`: nothing wrong; `degraded`: ingestion is taken but something else is wrong (workers, search attributes); `unavailable`: the store or Temporal does not answer',
  }),
  /** Switchyard's version (package.json, CHANGELOG.md). */
  version: Type.String(),
  temporal: Type.Boolean(),
  /** The namespace has every search attribute Switchyard uses, with its type. */
  searchAttributes: Type.Boolean(),
  /** The settings store (SQLite file or PostgreSQL) answers a query. */
  store: Type.Boolean(),
  /** Every watched task queue has a worker that polled within HEALTH_POLLER_WINDOW. */
  worker: Type.Boolean(),
  taskQueues: Type.Array(Type.Object({ name: Type.String(), workers: Type.Integer(), lastPollAt: Type.Optional(Type.String({ format: 'date-time' })) })),
  /** What is wrong, one entry per dependency, each naming it and the fix where there is one; empty when healthy. */
  problems: Type.Array(Type.String()),
});

/**
 * What monitoring reads: the store, Temporal with every search attribute Switchyard
 * uses, and live workers on both delivery task queues (ingested calls, Personas syncs); 200 only
 * when all are well, 503 naming each problem and its fix. Behind the admin token: it names task
 * queues, worker counts and the namespace.
 */
export const statusRoutes: FastifyPluginAsync<{ deliveries: Deliveries; store: Store }> = async (app, { deliveries, store }) => {
  const reading = coalesced(async () => {
    const [{ temporal, searchAttributes, worker, taskQueues, problems }, storeUp] = await Promise.all([deliveries.health(), storeAnswers(store)]);
    const all = [...(storeUp ? [] : [STORE_AWAY]), ...problems];
    return { status: systemStatus({ store: storeUp, temporal, problems: all }), version: VERSION, temporal, searchAttributes, store: storeUp, worker, taskQueues, problems: all };
  }, READING_FRESH_MS);
  app.get('/status', { schema: { response: { 200: Status, 503: { ...Status, description: 'Something is wrong: `problems` names each dependency and its fix' } } } }, async (_request, reply) => {
    const status = await reading();
    return reply.code(status.status === 'ok' ? 200 : 503).send(status);
  });
};
