import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { cronProblem } from '../../personas/cron';
import { definitionProblem, type Checked } from '../../personas/definition';
import { snakeCase } from '../../personas/naming';
import { personasScheduleId } from '../../personas/temporal-ids';
import type { ComputationKind } from '../../personas/types';
import type { Computation, ComputationStore } from '../../store/personas-types';
import type { Store } from '../../store/types';
import type { ScheduledSync, SyncSchedules } from '../../ports';
import { ApiError, badRequest, notFound } from '../errors';
import { ErrorReply, errorReplies, IdParams } from './schemas';
import { audited, recordChange } from '../access/audit-trail';

export interface PersonasRouteOptions {
  store: Store;
  schedules: SyncSchedules;
  /** Cron of a definition created without `schedule` (PERSONAS_SYNC_SCHEDULE). */
  defaultSchedule: string;
}

/** What differs between the audience routes and the computed trait routes. */
export interface ComputationResource<D> {
  kind: ComputationKind;
  /** URL segment: `audiences`, `computed-traits`. */
  segment: string;
  /** Key of the list in GET replies: `audiences`, `computedTraits`. */
  listKey: string;
  /** "audience", "computed trait": how messages name one. */
  noun: string;
  check(definition: unknown): Checked<D>;
  table(store: Store): ComputationStore<D>;
  /** The API doc of `definition`. */
  definitionSchema: TSchema;
}

const Name = Type.String({ minLength: 1, maxLength: 200, description: 'Its snake_case form is the trait key receivers get ("First Time Shopper" → first_time_shopper).' });
const Schedule = Type.String({ minLength: 1, maxLength: 100, description: 'Cron expression (UTC) of its Temporal Schedule, e.g. "*/15 * * * *" (the default, PERSONAS_SYNC_SCHEDULE).' });
const Paused = Type.Boolean({ description: 'Pauses its Temporal Schedule; POST .../sync still runs a sync.' });

const errors = { ...errorReplies, 409: ErrorReply, 503: ErrorReply };

const unavailable = (what: string) => new ApiError(503, 'temporal_unavailable', `${what}: the workflow engine is unavailable; retry later`, { 'retry-after': '5' });

/** Create, read, change, delete and sync one kind of Personas definition; each has a Temporal Schedule. */
export function computationRoutes<D>(resource: ComputationResource<D>): FastifyPluginAsyncTypebox<PersonasRouteOptions> {
  const { kind, segment, listKey, noun } = resource;

  const View = Type.Object({
    id: Type.String(),
    sourceId: Type.String(),
    name: Type.String(),
    key: Type.String({ description: 'The trait key sent to receivers.' }),
    definition: resource.definitionSchema,
    schedule: Type.String(),
    paused: Type.Boolean(),
    scheduleId: Type.String({ description: 'Id of its Temporal Schedule (Web UI → Schedules).' }),
    lastSync: Type.Union([Type.Object({ version: Type.Integer(), syncedAt: Type.String({ format: 'date-time' }) }), Type.Null()]),
    pendingSync: Type.Union([Type.Object({ version: Type.Integer(), computedAt: Type.String({ format: 'date-time' }), changes: Type.Integer() }), Type.Null()], {
      description: 'A sync that computed its changes and has not finished sending them yet.',
    }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  });
  const CreateBody = Type.Object(
    { name: Name, definition: resource.definitionSchema, schedule: Type.Optional(Schedule), paused: Type.Optional(Paused) },
    { additionalProperties: false },
  );
  const PatchBody = Type.Object(
    {
      name: Type.Optional(Type.String({ ...Name, description: 'A new name must keep the same trait key (e.g. only its capitals change).' })),
      definition: Type.Optional(resource.definitionSchema),
      schedule: Type.Optional(Schedule),
      paused: Type.Optional(Paused),
    },
    { additionalProperties: false },
  );
  const SyncStarted = Type.Object({ workflowId: Type.String(), runId: Type.String() });
  const SourceParams = Type.Object({ sourceId: IdParams.properties.id });
  const NestedParams = Type.Object({ sourceId: IdParams.properties.id, id: IdParams.properties.id });

  const toView = (c: Computation<D>): Static<typeof View> => ({
    id: c.id,
    sourceId: c.sourceId,
    name: c.name,
    key: c.key,
    definition: c.definition,
    schedule: c.schedule,
    paused: c.paused,
    scheduleId: personasScheduleId({ kind, id: c.id }),
    lastSync: c.lastSync,
    pendingSync: c.pending,
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
  });

  const scheduled = (c: Computation<D>): ScheduledSync => ({ computation: { kind, id: c.id }, sourceId: c.sourceId, name: c.name, schedule: c.schedule, paused: c.paused });

  function checkDefinition(definition: unknown): D {
    const checked = resource.check(definition);
    if (!checked.ok) throw badRequest(definitionProblem(checked));
    return checked.value;
  }

  function checkSchedule(schedule: string): string {
    const problem = cronProblem(schedule);
    if (problem) throw badRequest(`schedule: ${problem}`);
    return schedule.trim();
  }

  return async (app, { store, schedules, defaultSchedule }) => {
    const table = resource.table(store);

    async function find(id: string, sourceId?: string): Promise<Computation<D>> {
      const found = await table.get(id);
      if (!found || (sourceId !== undefined && found.sourceId !== sourceId)) throw notFound(`${noun} ${id}`);
      return found;
    }

    async function assertKeyFree(sourceId: string, key: string, self?: string): Promise<void> {
      const owner = await store.personas.keyOwner(sourceId, key);
      if (owner && owner.id !== self) {
        throw new ApiError(409, 'conflict', `name: the trait key "${key}" is already sent by ${owner.kind === 'audience' ? 'audience' : 'computed trait'} ${owner.id} of this source`);
      }
    }

    app.post(
      `/sources/:sourceId/${segment}`,
      { schema: { params: SourceParams, body: CreateBody, response: { 201: View, ...errors } } },
      async (request, reply) => {
        const { sourceId } = request.params;
        if (!(await store.sources.get(sourceId))) throw notFound(`source ${sourceId}`);
        const key = snakeCase(request.body.name);
        if (!key) throw badRequest('name: must contain a letter or a digit (its snake_case form is the trait key)');
        const definition = checkDefinition(request.body.definition);
        const schedule = checkSchedule(request.body.schedule ?? defaultSchedule);
        await assertKeyFree(sourceId, key);
        const created = await audited(store, request, (tx) => resource.table(tx).create(sourceId, { name: request.body.name, key, definition, schedule, paused: request.body.paused ?? false }), { target: ({ id }) => id });
        try {
          await schedules.create(scheduled(created));
        } catch (err) {
          // No definition without its schedule: undo (the audit log shows it undone), and let the caller retry the whole create.
          await audited(store, request, (tx) => resource.table(tx).delete(created.id), { target: created.id, changed: [], action: `${noun.replace(' ', '_')}.delete` });
          request.log.error({ err: (err as Error).message, id: created.id }, 'could not create the Temporal Schedule');
          throw unavailable(`${noun} not created`);
        }
        return reply.code(201).send(toView(created));
      },
    );

    app.get(
      `/sources/:sourceId/${segment}`,
      { schema: { params: SourceParams, response: { 200: Type.Object({ [listKey]: Type.Array(View) }), ...errors } } },
      async (request) => {
        const { sourceId } = request.params;
        if (!(await store.sources.get(sourceId))) throw notFound(`source ${sourceId}`);
        return { [listKey]: (await table.listBySource(sourceId)).map(toView) };
      },
    );

    // Each route by id answers at /admin/<segment>/:id and at /admin/sources/:sourceId/<segment>/:id.
    for (const nested of [false, true]) {
      const path = nested ? `/sources/:sourceId/${segment}/:id` : `/${segment}/:id`;
      const params = nested ? NestedParams : IdParams;
      const sourceOf = (p: unknown) => (nested ? (p as Static<typeof NestedParams>).sourceId : undefined);

      app.get(path, { schema: { params, response: { 200: View, ...errors } } }, async (request) => {
        const { id } = request.params;
        return toView(await find(id, sourceOf(request.params)));
      });

      app.patch(path, { schema: { params, body: PatchBody, response: { 200: View, ...errors } } }, async (request) => {
        const { id } = request.params;
        const current = await find(id, sourceOf(request.params));
        const body = request.body;
        if (body.name !== undefined && snakeCase(body.name) !== current.key) {
          throw badRequest(`name: "${body.name}" would change the trait key from ${current.key} to ${snakeCase(body.name) || '(nothing)'}, which receivers already hold; create a new ${noun} instead`);
        }
        const definition = body.definition === undefined ? undefined : checkDefinition(body.definition);
        const schedule = body.schedule === undefined ? undefined : checkSchedule(body.schedule);
        const next = { ...current, ...(body.name !== undefined && { name: body.name }), ...(schedule !== undefined && { schedule }), ...(body.paused !== undefined && { paused: body.paused }) };
        if (next.schedule !== current.schedule || next.paused !== current.paused || next.name !== current.name) {
          try {
            await schedules.update(scheduled(next));
          } catch (err) {
            request.log.error({ err: (err as Error).message, id }, 'could not update the Temporal Schedule');
            throw unavailable(`${noun} ${id} not changed`);
          }
        }
        const updated = await audited(store, request, (tx) => resource.table(tx).update(id, { name: body.name, definition, schedule, paused: body.paused }), { target: id });
        if (!updated) throw notFound(`${noun} ${id}`);
        return toView(updated);
      });

      app.delete(path, { schema: { params, response: { 204: Type.Null(), ...errors } } }, async (request, reply) => {
        const { id } = request.params;
        await find(id, sourceOf(request.params));
        try {
          await schedules.delete({ kind, id });
        } catch (err) {
          request.log.error({ err: (err as Error).message, id }, 'could not delete the Temporal Schedule');
          throw unavailable(`${noun} ${id} not deleted`);
        }
        await audited(store, request, (tx) => resource.table(tx).delete(id), { target: id, changed: [] });
        return reply.code(204).send(null);
      });

      app.post(`${path}/sync`, { schema: { params, response: { 202: SyncStarted, ...errors } } }, async (request, reply) => {
        const { id } = request.params;
        const current = await find(id, sourceOf(request.params));
        try {
          const started = await schedules.syncNow(scheduled(current));
          await recordChange(store, request, id, []);
          return reply.code(202).send(started);
        } catch (err) {
          if (err instanceof ApiError) throw err;
          request.log.error({ err: (err as Error).message, id }, 'could not start a sync');
          throw unavailable(`sync of ${noun} ${id} not started`);
        }
      });
    }
  };
}
