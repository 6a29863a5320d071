import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ID_PREFIX } from '../../functions/handlers';
import { acceptedInstanceSettings, maskedInstanceSettings } from '../../functions/instance-settings';
import type { FunctionSetting } from '../../store/functions';
import { InsertFunctionTaken } from '../../store/destinations';
import { newId } from '../../store/ids';
import type { Destination, InsertFunctionInstance, Store } from '../../store/types';
import { audited } from '../access/audit-trail';
import { ApiError, badRequest, notFound } from '../errors';
import { errorReplies, IdParams } from './schemas';

/**
 * Insert function instances in Segment's alpha Public API shape: an INSERT_DESTINATION function
 * attached to one destination (webhooks or actions), at most one per destination. Its handler runs
 * on each event the destination's filters let through, and the event it returns is what the
 * destination renders and sends. Settings as Segment answers them: plain values in `settings`,
 * sensitive ones masked in `encryptedSettings`; either may be sent, and a masked value sent back
 * keeps the secret it stands for.
 */

const PREFIX = ID_PREFIX.INSERT_DESTINATION;
/** Segment's display-name limit for an insert function. */
const MAX_NAME = 120;

const SettingValues = Type.Record(Type.String(), Type.Unknown(), { maxProperties: 100 });
/** What GET answers but a save ignores (or refuses to change), so a read object can be saved back. */
const readOnly = {
  id: Type.Optional(Type.String({ maxLength: 100 })),
  classId: Type.Optional(Type.String({ maxLength: 100 })),
  createdAt: Type.Optional(Type.String({ maxLength: 40 })),
  updatedAt: Type.Optional(Type.String({ maxLength: 40 })),
};
const CreateBody = Type.Object(
  {
    ...readOnly,
    functionId: Type.String({ minLength: 1, maxLength: 100, description: 'The INSERT_DESTINATION function: `ifnd_…`, or its hex part as Segment sends it (prefix stripped).' }),
    integrationId: Type.String({ minLength: 1, maxLength: 100, description: 'The destination (webhooks or actions) it runs for; at most one instance per destination.' }),
    enabled: Type.Boolean(),
    name: Type.Optional(Type.Union([Type.String({ maxLength: MAX_NAME }), Type.Null()])),
    settings: SettingValues,
    encryptedSettings: Type.Optional(SettingValues),
  },
  { additionalProperties: false },
);
const PatchBody = Type.Object(
  {
    ...readOnly,
    functionId: Type.Optional(CreateBody.properties.functionId),
    integrationId: Type.Optional(CreateBody.properties.integrationId),
    enabled: Type.Optional(Type.Boolean()),
    name: CreateBody.properties.name,
    settings: Type.Optional(SettingValues),
    encryptedSettings: Type.Optional(SettingValues),
  },
  { additionalProperties: false },
);
const InstanceView = Type.Object({
  id: Type.String(),
  name: Type.Union([Type.String(), Type.Null()]),
  integrationId: Type.String(),
  classId: Type.String({ description: 'The function it runs (Segment calls a function a class).' }),
  functionId: Type.String(),
  enabled: Type.Boolean(),
  createdAt: Type.String(),
  updatedAt: Type.String(),
  settings: Type.Record(Type.String(), Type.Unknown(), { description: 'Values of settings not marked sensitive.' }),
  encryptedSettings: Type.Record(Type.String(), Type.Unknown(), { description: 'Values of sensitive settings, masked (10 × • and the last 4 characters).' }),
});

const conflict = (message: string) => new ApiError(409, 'conflict', message);

/** A function deleted since: every setting is shown as sensitive, masked. */
const definitionsOf = (settings: Record<string, unknown>): FunctionSetting[] => Object.keys(settings).map((name) => ({ name, label: name, description: '', type: 'STRING', required: false, sensitive: true }));

function view(destination: Destination, instance: InsertFunctionInstance, definitions: FunctionSetting[] | undefined) {
  const known = definitions ?? definitionsOf(instance.settings);
  const masked = maskedInstanceSettings(known, instance.settings);
  const sensitive = new Set(known.filter((d) => d.sensitive).map((d) => d.name));
  const pick = (secret: boolean) => Object.fromEntries(Object.entries(masked).filter(([name]) => sensitive.has(name) === secret));
  return {
    id: instance.id,
    name: instance.name,
    integrationId: destination.id,
    classId: instance.functionId,
    functionId: instance.functionId,
    enabled: instance.enabled,
    createdAt: instance.createdAt,
    updatedAt: instance.updatedAt,
    settings: pick(false),
    encryptedSettings: pick(true),
  };
}

export const insertFunctionInstanceRoutes: FastifyPluginAsyncTypebox<{ store: Store }> = async (app, { store }) => {
  /** The INSERT_DESTINATION function an id names (with or without Segment's `ifnd_`), or a 400. */
  const insertFunction = async (given: string) => {
    const id = given.startsWith(PREFIX) ? given : `${PREFIX}${given}`;
    const fn = (await store.functions.get(id)) ?? (await store.functions.get(given));
    if (!fn) throw badRequest(`functionId: no function ${given} (create one with POST /admin/functions, resourceType INSERT_DESTINATION)`);
    if (fn.resourceType !== 'INSERT_DESTINATION') throw badRequest(`functionId: ${fn.id} is a ${fn.resourceType} function; an insert function instance runs an INSERT_DESTINATION function (${PREFIX}…)`);
    return fn;
  };
  const shown = async (destination: Destination) => {
    const instance = destination.insertFunction!;
    return view(destination, instance, (await store.functions.get(instance.functionId))?.settings);
  };
  const found = async (id: string) => {
    const destination = await store.destinations.getByInsertFunction(id);
    if (!destination?.insertFunction) throw notFound(`insert function instance ${id}`);
    return destination;
  };
  const settingsOf = (definitions: FunctionSetting[], body: { settings?: Record<string, unknown>; encryptedSettings?: Record<string, unknown> }, current?: Record<string, unknown>) => {
    for (const name of Object.keys(body.encryptedSettings ?? {})) if (Object.hasOwn(body.settings ?? {}, name)) throw badRequest(`encryptedSettings.${name}: is also in settings; give each setting once`);
    const accepted = acceptedInstanceSettings(definitions, { ...body.settings, ...body.encryptedSettings }, current);
    if ('rule' in accepted) throw badRequest(accepted.rule);
    return accepted.settings;
  };
  const attach = async <T>(work: () => Promise<T>, destinationId: string): Promise<T> => {
    try {
      return await work();
    } catch (err) {
      if (err instanceof InsertFunctionTaken) throw conflict(`integrationId: destination ${destinationId} already has an insert function instance; a destination runs at most one (change or delete that one)`);
      throw err;
    }
  };

  app.post('/insert-function-instances', { schema: { body: CreateBody, response: { 201: InstanceView, ...errorReplies, 409: errorReplies[400] } } }, async (request, reply) => {
    const body = request.body;
    const fn = await insertFunction(body.functionId);
    const destination = await store.destinations.get(body.integrationId);
    if (!destination) throw badRequest(`integrationId: no destination ${body.integrationId}`);
    if (destination.type === 'function') throw badRequest(`integrationId: ${destination.id} is a function destination; an insert function runs before a webhooks or actions destination sends`);
    if (destination.insertFunction) throw conflict(`integrationId: destination ${destination.id} already has insert function instance ${destination.insertFunction.id}; a destination runs at most one (change or delete that one)`);
    const at = new Date().toISOString();
    const instance: InsertFunctionInstance = { id: newId('ifi'), functionId: fn.id, name: body.name ?? null, enabled: body.enabled, settings: settingsOf(fn.settings, body), createdAt: at, updatedAt: at };
    const updated = await attach(() => audited(store, request, (tx) => tx.destinations.update(destination.id, { insertFunction: instance }), { target: instance.id }), destination.id);
    if (!updated?.insertFunction) throw badRequest(`integrationId: no destination ${body.integrationId}`);
    return reply.code(201).send(view(updated, updated.insertFunction, fn.settings));
  });

  app.get(
    '/insert-function-instances',
    { schema: { querystring: Type.Object({ functionId: Type.Optional(Type.String({ maxLength: 100 })) }), response: { 200: Type.Object({ insertFunctionInstances: Type.Array(InstanceView) }), ...errorReplies } } },
    async (request) => {
      const given = request.query.functionId;
      const functionId = given === undefined || given.startsWith(PREFIX) ? given : `${PREFIX}${given}`;
      const destinations = await store.destinations.listWithInsertFunction(functionId);
      return { insertFunctionInstances: await Promise.all(destinations.map(shown)) };
    },
  );

  app.get('/insert-function-instances/:id', { schema: { params: IdParams, response: { 200: InstanceView, ...errorReplies } } }, async (request) => shown(await found(request.params.id)));

  app.patch('/insert-function-instances/:id', { schema: { params: IdParams, body: PatchBody, response: { 200: InstanceView, ...errorReplies } } }, async (request) => {
    const destination = await found(request.params.id);
    const current = destination.insertFunction!;
    const body = request.body;
    if (body.integrationId !== undefined && body.integrationId !== destination.id) throw badRequest(`integrationId: an instance stays on its destination (${destination.id}); delete it and create one on the other`);
    const fn = await store.functions.get(current.functionId);
    if (body.functionId !== undefined && (await insertFunction(body.functionId)).id !== current.functionId) throw badRequest(`functionId: an instance keeps its function (${current.functionId}); delete it and create another`);
    const changesSettings = body.settings !== undefined || body.encryptedSettings !== undefined;
    if (changesSettings && !fn) throw badRequest(`settings: the instance's function ${current.functionId} no longer exists, so its settings cannot be checked`);
    const instance: InsertFunctionInstance = {
      ...current,
      ...(body.name !== undefined && { name: body.name }),
      ...(body.enabled !== undefined && { enabled: body.enabled }),
      ...(changesSettings && { settings: settingsOf(fn!.settings, body, current.settings) }),
      updatedAt: new Date().toISOString(),
    };
    const updated = await audited(store, request, (tx) => tx.destinations.update(destination.id, { insertFunction: instance }), { target: current.id });
    if (!updated?.insertFunction) throw notFound(`insert function instance ${request.params.id}`);
    return view(updated, updated.insertFunction, fn?.settings);
  });

  app.delete('/insert-function-instances/:id', { schema: { params: IdParams, response: { 204: Type.Null(), ...errorReplies } } }, async (request, reply) => {
    const destination = await found(request.params.id);
    const detached = await audited(
      store,
      request,
      async (tx) => {
        // Only the instance read: one attached meanwhile in its place is not this one.
        const now = await tx.destinations.get(destination.id);
        return now?.insertFunction?.id === request.params.id ? tx.destinations.update(destination.id, { insertFunction: null }) : undefined;
      },
      { target: request.params.id },
    );
    if (!detached) throw notFound(`insert function instance ${request.params.id}`);
    return reply.code(204).send(null);
  });
};
