import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { deleteNotification } from '../../messages/delete-notification';
import { deliveryPlanner } from '../../messages/plan-deliveries';
import type { DeliveryInput, DeliveryPolicy } from '../../delivery/types';
import type { Store } from '../../store/types';
import type { Deliveries } from '../../ports';
import { ApiError, notFound } from '../errors';
import { errorReplies, IdParams } from './schemas';

const RegulationBody = Type.Object(
  {
    regulationType: Type.Literal('DELETE'),
    subjectType: Type.Literal('USER_ID'),
    subjectIds: Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { minItems: 1, maxItems: 1000, uniqueItems: true }),
  },
  { additionalProperties: false },
);

const RegulationView = Type.Object({
  id: Type.String(),
  regulationType: Type.Literal('DELETE'),
  subjectType: Type.Literal('USER_ID'),
  subjectIds: Type.Array(Type.String()),
  /** Delete notifications started: one per (source with an enabled destination, user). */
  notifications: Type.Optional(Type.Integer()),
  /** Finished delivery workflows of these users deleted from Temporal (their events were in the history). */
  deliveriesDeleted: Type.Optional(Type.Integer()),
  createdAt: Type.String({ format: 'date-time' }),
});

/**
 * Seed, Events: a deletion request forwards one `delete` notification per affected source that has
 * the destination enabled, so the receiver can start its own automations.
 */
export const regulationRoutes: FastifyPluginAsyncTypebox<{ store: Store; deliveries: Deliveries; policy: DeliveryPolicy }> = async (app, { store, deliveries, policy }) => {
  const planDeliveries = deliveryPlanner(store.destinations, policy);
  app.post('/regulations', { schema: { body: RegulationBody, response: { 201: RegulationView, 503: errorReplies[400], ...errorReplies } } }, async (request, reply) => {
    const regulation = await store.regulations.create(request.body);
    // Switchyard's own copy of these users' data: Personas profiles, events, aliases and snapshots.
    await store.personas.profiles.forgetUsers(regulation.subjectIds);
    const sourceIds = await store.destinations.listSourceIdsWithEnabled();
    const inputs: DeliveryInput[] = [];
    for (const sourceId of sourceIds) {
      const plan = await planDeliveries(sourceId, regulation.subjectIds.map((userId) => deleteNotification(regulation, userId)));
      if (plan.status === 'planned') inputs.push(...plan.inputs);
    }
    try {
      await deliveries.start(inputs);
    } catch {
      throw new ApiError(503, 'temporal_unavailable', `regulation ${regulation.id} was recorded but its notifications could not be started; retry later`, { 'retry-after': '5' });
    }
    let deliveriesDeleted: number;
    try {
      deliveriesDeleted = await deliveries.forgetUsers(regulation.subjectIds);
    } catch {
      throw new ApiError(503, 'temporal_unavailable', `regulation ${regulation.id} was recorded and its notifications started, but deleting delivery history failed; retry later`, { 'retry-after': '5' });
    }
    return reply.code(201).send({ ...regulation, notifications: inputs.length, deliveriesDeleted });
  });

  app.get('/regulations/:id', { schema: { params: IdParams, response: { 200: RegulationView, ...errorReplies } } }, async (request) => {
    const regulation = await store.regulations.get(request.params.id);
    if (!regulation) throw notFound(`regulation ${request.params.id}`);
    return regulation;
  });
};
