import { Type, type Static } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { deleteNotification } from '../../messages/delete-notification';
import { deliveryPlanner } from '../../messages/plan-deliveries';
import type { DeliveryInput, DeliveryPolicy } from '../../delivery/types';
import { REGULATION_TYPES, type Regulation, type RegulationType, type Store } from '../../store/types';
import type { Deliveries } from '../../ports';
import type { Keyring } from '../../privacy/keyring';
import { eraseFunctionRequestsNaming } from '../../messages/erase-function-requests';
import { erasedSubjects } from '../../privacy/subjects';
import { visibleId } from '../../privacy/visible-ids';
import { ApiError, badRequest, notFound } from '../errors';
import { errorReplies, IdParams } from './schemas';
import { audited } from '../access/audit-trail';

const RegulationTypeSchema = Type.Unsafe<RegulationType>({
  type: 'string',
  enum: [...REGULATION_TYPES],
  description:
    "Segment's regulation types. `DELETE_ONLY` (or `DELETE`, the name Switchyard took first): erase the users. `SUPPRESS_ONLY`: their new calls are answered but neither delivered nor recorded, and their running deliveries stop. `SUPPRESS_WITH_DELETE`: both. `UNSUPPRESS`: lifts a suppression for calls accepted from now on.",
});

const RegulationBody = Type.Object(
  {
    regulationType: RegulationTypeSchema,
    subjectType: Type.Literal('USER_ID'),
    subjectIds: Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { minItems: 1, maxItems: 1000, uniqueItems: true }),
  },
  { additionalProperties: false },
);

const RegulationView = Type.Object({
  id: Type.String(),
  regulationType: RegulationTypeSchema,
  subjectType: Type.Literal('USER_ID'),
  subjectIds: Type.Array(Type.String(), {
    description: 'Keyed hashes (`h1_…`) of the ids, as the SwitchyardUserId search attribute holds them: the record outlives the users and names none of them (the ids themselves only with PAYLOAD_ENCRYPTION=off).',
  }),
  /** Delete notifications started: one per (user, source that has seen the user and has an enabled destination). */
  notifications: Type.Optional(Type.Integer()),
  /** Deliveries of these users (and, for a deletion, ids linked to them) still under way, terminated (before any notification started). */
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

/** What each regulation type does: erase the users, and suppress them or lift their suppression. */
const EFFECTS: Record<RegulationType, { erase: boolean; suppression?: 'add' | 'lift' }> = {
  DELETE: { erase: true },
  DELETE_ONLY: { erase: true },
  SUPPRESS_ONLY: { erase: false, suppression: 'add' },
  SUPPRESS_WITH_DELETE: { erase: true, suppression: 'add' },
  UNSUPPRESS: { erase: false, suppression: 'lift' },
};

const DEFAULT_LIST_LIMIT = 100;
const MAX_LIST_LIMIT = 1000;

const ListQuery = Type.Object(
  // Query strings arrive as text (the app's Ajv does not coerce types), so the limit is checked as digits.
  { limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,4}$', description: `1 to ${MAX_LIST_LIMIT} (default ${DEFAULT_LIST_LIMIT}).` })) },
  { additionalProperties: false },
);

type Effects = Pick<Static<typeof RegulationView>, 'notifications' | 'deliveriesStopped' | 'deliveriesDeleted'>;

/**
 * Seed, Events: a deletion request forwards one `delete` notification per affected source that has
 * the destination enabled, so the receiver can start its own automations. Affected: the source has
 * seen the user (store.sourceUsers); other sources' receivers never learn the id. A
 * suppression answers the user's new calls without delivering or recording them, and stops the
 * deliveries under way; UNSUPPRESS lifts it for new calls.
 */
export const regulationRoutes: FastifyPluginAsyncTypebox<{ store: Store; deliveries: Deliveries; policy: DeliveryPolicy; keyring: Keyring | undefined }> = async (app, { store, deliveries, policy, keyring }) => {
  const planDeliveries = deliveryPlanner(store.destinations, policy);

  /** A DELETE: erase the users everywhere Switchyard or Temporal holds them, and notify the sources that saw them. */
  async function erase(regulation: Regulation, userIds: string[]): Promise<Effects> {
    const purgeDeletedRows = async () => {
      if (!(await store.purgeDeletedRows())) app.log.warn({ regulation: regulation.id }, 'a reader held the SQLite write-ahead log past the busy timeout: rows this regulation deleted stay readable in it until the next regulation');
    };
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
    // The archive's copies go with those keys; with PAYLOAD_ENCRYPTION=off they are in
    // the clear, named by the ids themselves (privacy/visible-ids.ts), and are deleted instead.
    else await store.archive.forget(ids);
    // Fate rows go whole either way: their hashes would still say which events were the users'.
    await store.fates.forget(ids.flatMap((id) => [visibleId(keyring, 'userId', id), visibleId(keyring, 'anonymousId', id)]));
    // Source functions' failed requests name no user until read: those that name these users go, with their keys.
    await eraseFunctionRequestsNaming(store, ids);
    // Switchyard's own copy of these users' data: Personas profiles, events, aliases and snapshots.
    await store.personas.profiles.forgetUsers(userIds);
    // Violation rows hold names aggregated across users: the (source, minute) buckets these users were counted in go whole.
    await store.violations.forgetUsers(ids);
    // Not left readable in SQLite's write-ahead log, should the steps below stop at a 503.
    await purgeDeletedRows();

    const deliveriesStopped = await stopDeliveries(regulation, ids);

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
    return { notifications: inputs.length, deliveriesStopped, deliveriesDeleted };
  }

  async function stopDeliveries(regulation: Regulation, ids: string[]): Promise<number> {
    try {
      return await deliveries.stopUsers(ids, `stopped by regulation ${regulation.id}`);
    } catch {
      throw unavailable(`regulation ${regulation.id} was recorded but the users' running deliveries could not be stopped`);
    }
  }

  app.post('/regulations', { schema: { body: RegulationBody, response: { 201: RegulationView, 503: errorReplies[400], ...errorReplies } } }, async (request, reply) => {
    // The record and its audit row together; the work below reaches Temporal and is not held in a transaction.
    const regulation = await audited(store, request, (tx) => tx.regulations.create(request.body), { target: ({ id }) => id });
    // The record keeps hashes; the work below needs the ids, which only this request carries.
    const userIds = request.body.subjectIds;
    const { erase: erases, suppression } = EFFECTS[regulation.regulationType];
    if (suppression === 'lift') {
      await store.suppressions.lift(userIds, regulation.createdAt);
      return reply.code(201).send(regulation);
    }
    // First, so no call accepted from now on is delivered or recorded while the rest runs.
    if (suppression === 'add') await store.suppressions.add(userIds, regulation.createdAt);
    // A suppression alone stops the deliveries under way (attempts also check at send time) and keeps the rest.
    const effects = erases ? await erase(regulation, userIds) : { deliveriesStopped: await stopDeliveries(regulation, userIds) };
    return reply.code(201).send({ ...regulation, ...effects });
  });

  app.get('/regulations', { schema: { querystring: ListQuery, response: { 200: Type.Object({ regulations: Type.Array(RegulationView) }), ...errorReplies } } }, async (request) => {
    const limit = request.query.limit === undefined ? DEFAULT_LIST_LIMIT : Number(request.query.limit);
    if (limit < 1 || limit > MAX_LIST_LIMIT) throw badRequest(`limit: must be from 1 to ${MAX_LIST_LIMIT}`);
    return { regulations: await store.regulations.list(limit) };
  });

  app.get('/regulations/:id', { schema: { params: IdParams, response: { 200: RegulationView, ...errorReplies } } }, async (request) => {
    const regulation = await store.regulations.get(request.params.id);
    if (!regulation) throw notFound(`regulation ${request.params.id}`);
    return regulation;
  });
};
