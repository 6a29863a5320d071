import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { deleteNotification } from '../../messages/delete-notification';
import { deliveryPlanner } from '../../messages/plan-deliveries';
import type { DeliveryInput, DeliveryPolicy } from '../../delivery/types';
import type { Store } from '../../store/types';
import type { Deliveries } from '../../ports';
import type { Keyring } from '../../privacy/keyring';
import { erasedSubjects } from '../../privacy/subjects';
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
  subjectIds: Type.Array(Type.String(), {
    description: 'Keyed hashes (`h1_…`) of the ids, as the SwitchyardUserId search attribute holds them: the record outlives the users and names none of them (the ids themselves only with PAYLOAD_ENCRYPTION=off).',
  }),
  /** Delete notifications started: one per (user, source that has seen the user and has an enabled destination). */
  notifications: Type.Optional(Type.Integer()),
  /** Deliveries of these users (and ids linked to them) still under way, terminated before any notification started. */
  deliveriesStopped: Type.Optional(Type.Integer()),
  /** Delivery workflows of these users deleted from Temporal, stopped ones included (their events were in the history). */
  deliveriesDeleted: Type.Optional(Type.Integer()),
  createdAt: Type.String({ format: 'date-time' }),
});

/**
 * How long delete notifications wait before their first attempt: an attempt that passed its
 * send-time check just before the regulation recorded its erasures ends within one delivery
 * timeout, so the receiver never gets a user's message after that user's delete.
 */
const IN_FLIGHT_GRACE_MS = 1_000;

const unavailable = (message: string) => new ApiError(503, 'temporal_unavailable', `${message}; retry later`, { 'retry-after': '5' });

/**
 * Seed, Events: a deletion request forwards one `delete` notification per affected source that has
 * the destination enabled, so the receiver can start its own automations. Affected: the source has
 * seen the user (store.sourceUsers); other sources' receivers never learn the id.
 */
export const regulationRoutes: FastifyPluginAsyncTypebox<{ store: Store; deliveries: Deliveries; policy: DeliveryPolicy; keyring: Keyring | undefined }> = async (app, { store, deliveries, policy, keyring }) => {
  const planDeliveries = deliveryPlanner(store.destinations, policy);
  app.post('/regulations', { schema: { body: RegulationBody, response: { 201: RegulationView, 503: errorReplies[400], ...errorReplies } } }, async (request, reply) => {
    const regulation = await store.regulations.create(request.body);
    const purgeDeletedRows = async () => {
      if (!(await store.purgeDeletedRows())) request.log.warn({ regulation: regulation.id }, 'a reader held the SQLite write-ahead log past the busy timeout: rows this regulation deleted stay readable in it until the next regulation');
    };
    // The record keeps hashes; the work below needs the ids, which only this request carries.
    const userIds = request.body.subjectIds;
    // Read before anything is forgotten: who saw the users, and the other ids they went by
    // (anonymousIds and aliases), whose deliveries are the users' too.
    const seenBy = await store.sourceUsers.sourcesThatSaw(userIds);
    const linkedIds = [...new Set([...(await store.personas.profiles.linkedIds(userIds)), ...(await store.sourceUsers.linkedIds(userIds))])].filter((id) => !userIds.includes(id));
    const ids = [...userIds, ...linkedIds];

    // From here on no attempt of a message accepted before now is sent (checked at send time).
    await store.erasures.add(ids, regulation.createdAt);
    // Crypto-shredding: every body sealed under these users' data keys becomes unreadable wherever
    // its copies are (workflows this request cannot find or delete, Temporal's backups, archives),
    // and no attempt can open one to send it. New calls after this get new keys.
    if (keyring) await store.dataKeys.destroy(erasedSubjects(keyring, ids));
    // Switchyard's own copy of these users' data: Personas profiles, events, aliases and snapshots.
    await store.personas.profiles.forgetUsers(userIds);
    // Not left readable in SQLite's write-ahead log, should the steps below stop at a 503 (issue 29).
    await purgeDeletedRows();

    let deliveriesStopped: number;
    try {
      deliveriesStopped = await deliveries.stopUsers(ids, `stopped by regulation ${regulation.id}`);
    } catch {
      throw unavailable(`regulation ${regulation.id} was recorded but the users' running deliveries could not be stopped`);
    }

    const inputs: DeliveryInput[] = [];
    for (const [sourceId, seenUserIds] of seenBy) {
      const plan = await planDeliveries(sourceId, seenUserIds.map((userId) => deleteNotification(keyring, regulation, userId)));
      if (plan.status === 'planned') inputs.push(...plan.inputs);
    }
    try {
      await deliveries.start(inputs, undefined, { startDelayMs: policy.timeoutMs + IN_FLIGHT_GRACE_MS });
    } catch {
      throw unavailable(`regulation ${regulation.id} was recorded but its notifications could not be started`);
    }
    // Only once the notifications are durable: a retried regulation still finds who to notify.
    await store.sourceUsers.forget(ids);
    await purgeDeletedRows();

    let deliveriesDeleted: number;
    try {
      deliveriesDeleted = await deliveries.forgetUsers(ids);
    } catch {
      throw unavailable(`regulation ${regulation.id} was recorded and its notifications started, but deleting delivery history failed`);
    }
    return reply.code(201).send({ ...regulation, notifications: inputs.length, deliveriesStopped, deliveriesDeleted });
  });

  app.get('/regulations/:id', { schema: { params: IdParams, response: { 200: RegulationView, ...errorReplies } } }, async (request) => {
    const regulation = await store.regulations.get(request.params.id);
    if (!regulation) throw notFound(`regulation ${request.params.id}`);
    return regulation;
  });
};
