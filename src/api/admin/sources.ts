import { Type, type Static } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Source, SourceFields, Store } from '../../store/types';
import { SegmentIdTaken, WriteKeyTaken } from '../../store/sources';
import { ApiError, badRequest, notFound } from '../errors';
import { audited } from '../access/audit-trail';
import { ErrorReply, errorReplies, IdParams } from './schemas';
import { IGNORED_SOURCE_FIELDS, labelFilter, labelsMatch, type SourceLabelFilter } from './source-shape';
import { acceptedInstanceSettings, maskedInstanceSettings } from '../../functions/instance-settings';
import { sourceFunctionWebhookUrl } from '../../functions/source-webhook';
import { publicEndpoint } from '../source-settings';

const Label = Type.Object(
  {
    key: Type.String({ minLength: 1, maxLength: 200 }),
    value: Type.String({ maxLength: 200 }),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 1000 }), Type.Null()])),
  },
  { additionalProperties: false },
);

const SourceView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  slug: Type.Optional(Type.String()),
  labels: Type.Array(Type.Object({ key: Type.String(), value: Type.String(), description: Type.Optional(Type.String()) })),
  segmentId: Type.Optional(Type.String({ description: 'The Segment source id an import matched this source by.' })),
  functionId: Type.Optional(Type.String({ description: 'A source function (`sfnc_…`): requests to the source\'s webhookUrl run its deployed version.' })),
  settings: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: "A source function's settings, sensitive values masked (10 × • and the last 4 characters)." })),
  writeKeyHint: Type.String({ description: 'Last 4 characters of the write key.' }),
  createdAt: Type.String({ format: 'date-time' }),
});

const ChangedSourceView = Type.Composite([
  SourceView,
  Type.Object({ ignoredFields: Type.Optional(Type.Array(Type.String(), { description: "Segment fields given that have no meaning in Switchyard: accepted, not kept." })) }),
]);

const CreatedSourceView = Type.Composite([
  ChangedSourceView,
  Type.Object({
    writeKey: Type.String({ description: 'Shown only in this reply: Switchyard keeps a hash of it.' }),
    webhookUrl: Type.Optional(Type.String({ description: "A source function's webhook, `<base>/functions?b=<base64 of sourceId::writeKey>` as Segment forms it; shown only in this reply, as it holds the write key." })),
  }),
]);

/**
 * A write key a client already has (Segment's, kept so only the client's host changes): at least 16
 * characters, printable, no colon (HTTP Basic auth puts the key before a colon).
 */
const WriteKey = Type.String({ minLength: 16, maxLength: 200, pattern: '^[\\x21-\\x39\\x3b-\\x7e]+$', description: 'An existing write key to keep (at least 16 printable characters, no colon or space; unique). Absent: a new one is made.' });

/** Segment's source shape; fields with no meaning here are accepted and named in `ignoredFields`. */
const segmentFields = {
  slug: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: '^[a-z0-9_-]+$', description: "Segment's slug: lower-case letters, digits, `_` and `-`." })),
  labels: Type.Optional(Type.Union([Type.Array(Label, { maxItems: 50 }), Type.Null()], { description: 'Segment labels, e.g. `[{"key":"environment","value":"prod"}]`; `null` is none.' })),
  writeKey: Type.Optional(WriteKey),
  writeKeys: Type.Optional(Type.Array(WriteKey, { minItems: 1, maxItems: 1, description: "Segment's Public API list of write keys: a Switchyard source has one." })),
  enabled: Type.Optional(Type.Boolean({ description: 'Accepted and ignored: a Switchyard source always takes the calls sent with its key.' })),
  settings: Type.Optional(Type.Unknown({ description: "Accepted and ignored: Segment's per-source catalog settings (see /admin/sources/:id/settings for schema controls)." })),
  metadata: Type.Optional(Type.Unknown({ description: "Accepted and ignored: Segment's catalog entry (`{id}`)." })),
  workspaceId: Type.Optional(Type.Unknown({ description: 'Accepted and ignored.' })),
};

const functionId = Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'A SOURCE function to run on requests to the source\'s webhookUrl; `settings` are then its settings.' }));
const CreateSourceBody = Type.Object({ name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })), functionId, ...segmentFields }, { additionalProperties: false });
const PatchSourceBody = Type.Object({ name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })), ...segmentFields }, { additionalProperties: false, minProperties: 1 });
type SourceBody = Static<typeof CreateSourceBody>;

const ListQuery = Type.Object(
  { label: Type.Optional(Type.Union([Type.String({ maxLength: 401 }), Type.Array(Type.String({ maxLength: 401 }), { maxItems: 20 })], { description: 'Only sources with this label, `key:value`; repeated: all of them.' })) },
  { additionalProperties: false },
);

/** A source as answered; a source function's settings with every sensitive value masked. */
async function toSourceView(store: Store, source: Source): Promise<Static<typeof SourceView>> {
  const view: Static<typeof SourceView> = { id: source.id, name: source.name, labels: source.labels, writeKeyHint: source.writeKeyHint, createdAt: source.createdAt };
  if (source.slug) view.slug = source.slug;
  if (source.segmentId) view.segmentId = source.segmentId;
  if (source.function) {
    const fn = await store.functions.get(source.function.functionId);
    view.functionId = source.function.functionId;
    // A function deleted since: its definitions are gone, so nothing is shown in clear.
    view.settings = fn ? maskedInstanceSettings(fn.settings, source.function.settings) : {};
  }
  return view;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The source function a body names, its settings checked against the function's definitions (`current`: masked values sent back keep these). */
async function sourceFunction(store: Store, functionId: string, settings: unknown, current: Record<string, unknown> = {}): Promise<NonNullable<SourceFields['function']>> {
  const fn = await store.functions.get(functionId);
  if (!fn) throw badRequest(`functionId: no function ${functionId}`);
  if (fn.resourceType !== 'SOURCE') throw badRequest(`functionId: ${functionId} is a ${fn.resourceType} function; a source runs a SOURCE function`);
  if (settings !== undefined && settings !== null && !isObject(settings)) throw badRequest("settings: must be an object of the function's setting values");
  const accepted = acceptedInstanceSettings(fn.settings, (settings as Record<string, unknown> | undefined) ?? {}, current);
  if ('rule' in accepted) throw badRequest(accepted.rule);
  return { functionId, settings: accepted.settings };
}

/** The webhook's base: PUBLIC_URL, else the admin request's own protocol and host (as the settings route does). */
function webhookBase(publicUrl: string, request: { protocol: string; host: string }): string {
  const endpoint = publicEndpoint(publicUrl, request);
  if ('problem' in endpoint) throw badRequest(endpoint.problem);
  return `${endpoint.protocol}://${endpoint.apiHost.replace(/\/v1$/, '')}`;
}

/** The body as the store's fields, and the fields given that were ignored. */
function sourceFields(body: SourceBody): { fields: SourceFields; ignored: string[] } {
  if (body.writeKey !== undefined && body.writeKeys !== undefined) throw badRequest('writeKeys: give writeKey or writeKeys, not both');
  const fields: SourceFields = {};
  if (body.name !== undefined) fields.name = body.name;
  if (body.slug !== undefined) fields.slug = body.slug;
  if (body.labels !== undefined) fields.labels = (body.labels ?? []).map((l) => (l.description ? { key: l.key, value: l.value, description: l.description } : { key: l.key, value: l.value }));
  const writeKey = body.writeKey ?? body.writeKeys?.[0];
  if (writeKey !== undefined) fields.writeKey = writeKey;
  return { fields, ignored: IGNORED_SOURCE_FIELDS.filter((name) => Object.hasOwn(body, name)) };
}

const writeKeyConflict = (err: unknown): never => {
  if (err instanceof WriteKeyTaken || err instanceof SegmentIdTaken) throw new ApiError(409, 'conflict', err.message);
  throw err;
};

/** Sources: where events come from, each identified by its write key. */
export const sourceRoutes: FastifyPluginAsyncTypebox<{ store: Store; publicUrl?: string }> = async (app, { store, publicUrl = '' }) => {
  app.post(
    '/sources',
    { schema: { body: CreateSourceBody, response: { 201: CreatedSourceView, 409: ErrorReply, ...errorReplies } } },
    async (request, reply) => {
      const { fields, ignored: ignoredFields } = sourceFields(request.body);
      const name = fields.name ?? fields.slug ?? undefined;
      if (name === undefined) throw badRequest('name: is required (or slug, which then names the source)');
      const functionId = request.body.functionId;
      // With a function, `settings` are its instance's settings, not Segment's ignored catalog settings.
      const ignored = functionId === undefined ? ignoredFields : ignoredFields.filter((f) => f !== 'settings');
      if (functionId !== undefined) fields.function = await sourceFunction(store, functionId, request.body.settings);
      const base = functionId === undefined ? undefined : webhookBase(publicUrl, request);
      const { source, writeKey } = await audited(store, request, (tx) => tx.sources.create(name, fields), { target: ({ source }) => source.id }).catch(writeKeyConflict);
      return reply.code(201).send({ ...(await toSourceView(store, source)), ...(ignored.length > 0 ? { ignoredFields: ignored } : {}), writeKey, ...(base !== undefined && { webhookUrl: sourceFunctionWebhookUrl(base, source.id, writeKey) }) });
    },
  );

  app.get('/sources', { schema: { querystring: ListQuery, response: { 200: Type.Object({ sources: Type.Array(SourceView) }), ...errorReplies } } }, async (request) => {
    const given = request.query.label;
    const filters: SourceLabelFilter[] = (given === undefined ? [] : Array.isArray(given) ? given : [given]).map((text) => {
      const filter = labelFilter(text);
      if (!filter) throw badRequest(`label: ${JSON.stringify(text)} is not key:value (e.g. environment:prod)`);
      return filter;
    });
    return { sources: await Promise.all((await store.sources.list()).filter((s) => labelsMatch(s.labels, filters)).map((s) => toSourceView(store, s))) };
  });

  app.get('/sources/:id', { schema: { params: IdParams, response: { 200: SourceView, ...errorReplies } } }, async (request) => {
    const source = await store.sources.get(request.params.id);
    if (!source) throw notFound(`source ${request.params.id}`);
    return toSourceView(store, source);
  });

  app.patch(
    '/sources/:id',
    { schema: { params: IdParams, body: PatchSourceBody, response: { 200: ChangedSourceView, 409: ErrorReply, ...errorReplies } } },
    async (request) => {
      const { fields, ignored: ignoredFields } = sourceFields(request.body);
      const current = await store.sources.get(request.params.id);
      if (!current) throw notFound(`source ${request.params.id}`);
      // A source function's settings change with `settings`; a masked value sent back keeps its secret.
      const ignored = current.function ? ignoredFields.filter((f) => f !== 'settings') : ignoredFields;
      if (current.function && request.body.settings !== undefined) fields.function = await sourceFunction(store, current.function.functionId, request.body.settings, current.function.settings);
      const source = await audited(store, request, (tx) => tx.sources.update(request.params.id, fields), { target: request.params.id }).catch(writeKeyConflict);
      if (!source) throw notFound(`source ${request.params.id}`);
      return { ...(await toSourceView(store, source)), ...(ignored.length > 0 ? { ignoredFields: ignored } : {}) };
    },
  );

  app.delete(
    '/sources/:id',
    { schema: { params: IdParams, response: { 204: Type.Null(), ...errorReplies } } },
    async (request, reply) => {
      if (!(await audited(store, request, (tx) => tx.sources.delete(request.params.id), { target: request.params.id }))) throw notFound(`source ${request.params.id}`);
      return reply.code(204).send(null);
    },
  );
};
