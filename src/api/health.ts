import type { FastifyPluginAsync } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { Deliveries } from '../ports';
import type { Store } from '../store';
import { VERSION } from '../version';

/** A store that does not answer this fast counts as away (PostgreSQL's connect timeout is longer). */
const STORE_PING_TIMEOUT_MS = 2_000;

const Health = Type.Object({
  status: Type.String(),
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
 * Ready only when the API runs, its store answers, Temporal answers with every search attribute
 * Switchyard uses, and live workers poll both delivery task queues (ingested calls, Personas syncs).
 */
export const healthRoutes: FastifyPluginAsync<{ deliveries: Deliveries; store: Store }> = async (app, { deliveries, store }) => {
  app.get('/health', { schema: { response: { 200: Health, 503: Health } } }, async (_request, reply) => {
    const [{ temporal, searchAttributes, worker, taskQueues, problems }, storeUp] = await Promise.all([deliveries.health(), storeAnswers(store)]);
    const all = [...(storeUp ? [] : [`store: no answer within ${STORE_PING_TIMEOUT_MS / 1000} s (DATABASE_URL or DATABASE_PATH)`]), ...problems];
    const ok = all.length === 0;
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ok' : 'unavailable', version: VERSION, temporal, searchAttributes, store: storeUp, worker, taskQueues, problems: all });
  });
};

async function storeAnswers(store: Store): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), STORE_PING_TIMEOUT_MS)));
  const answered = store.ping().then(() => true, () => false);
  try {
    return await Promise.race([answered, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
