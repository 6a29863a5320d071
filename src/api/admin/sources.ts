import { Type, type Static } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Source, SourceFields, Store } from '../../store/types';
import { SegmentIdTaken, WriteKeyTaken } from '../../store/sources';
import { ApiError, badRequest, notFound } from '../errors';
import { audited } from '../access/audit-trail';
import { ErrorReply, errorReplies, IdParams } from './schemas';
import { IGNORED_SOURCE_FIELDS, labelFilter, labelsMatch, type SourceLabelFilter } from './source-shape';

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
  writeKeyHint: Type.String({ description: 'Last 4 characters of the write key.' }),
  createdAt: Type.String({ format: 'date-time' }),
});

const ChangedSourceView = Type.Composite([
  SourceView,
  Type.Object({ ignoredFields: Type.Optional(Type.Array(Type.String(), { description: "Segment fields given that have no meaning in Switchyard: accepted, not kept." })) }),
]);

const CreatedSourceView = Type.Composite([
  ChangedSourceView,
  Type.Object({ writeKey: Type.String({ description: 'Shown only in this reply: Switchyard keeps a hash of it.' }) }),
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

const CreateSourceBody = Type.Object({ name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })), ...segmentFields }, { additionalProperties: false });
const PatchSourceBody = Type.Object({ name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })), ...segmentFields }, { additionalProperties: false, minProperties: 1 });
type SourceBody = Static<typeof CreateSourceBody>;

const ListQuery = Type.Object(
  { label: Type.Optional(Type.Union([Type.String({ maxLength: 401 }), Type.Array(Type.String({ maxLength: 401 }), { maxItems: 20 })], { description: 'Only sources with this label, `key:value`; repeated: all of them.' })) },
  { additionalProperties: false },
);

function toSourceView(source: Source): Static<typeof SourceView> {
  const view: Static<typeof SourceView> = { id: source.id, name: source.name, labels: source.labels, writeKeyHint: source.writeKeyHint, createdAt: source.createdAt };
  if (source.slug) view.slug = source.slug;
  if (source.segmentId) view.segmentId = source.segmentId;
  return view;
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
export const sourceRoutes: FastifyPluginAsyncTypebox<{ store: Store }> = async (app, { store }) => {
  app.post(
    '/sources',
    { schema: { body: CreateSourceBody, response: { 201: CreatedSourceView, 409: ErrorReply, ...errorReplies } } },
    async (request, reply) => {
      const { fields, ignored } = sourceFields(request.body);
      const name = fields.name ?? fields.slug ?? undefined;
      if (name === undefined) throw badRequest('name: is required (or slug, which then names the source)');
      const { source, writeKey } = await audited(store, request, (tx) => tx.sources.create(name, fields), { target: ({ source }) => source.id }).catch(writeKeyConflict);
      return reply.code(201).send({ ...toSourceView(source), ...(ignored.length > 0 ? { ignoredFields: ignored } : {}), writeKey });
    },
  );

  app.get('/sources', { schema: { querystring: ListQuery, response: { 200: Type.Object({ sources: Type.Array(SourceView) }), ...errorReplies } } }, async (request) => {
    const given = request.query.label;
    const filters: SourceLabelFilter[] = (given === undefined ? [] : Array.isArray(given) ? given : [given]).map((text) => {
      const filter = labelFilter(text);
      if (!filter) throw badRequest(`label: ${JSON.stringify(text)} is not key:value (e.g. environment:prod)`);
      return filter;
    });
    return { sources: (await store.sources.list()).filter((s) => labelsMatch(s.labels, filters)).map(toSourceView) };
  });

  app.get('/sources/:id', { schema: { params: IdParams, response: { 200: SourceView, ...errorReplies } } }, async (request) => {
    const source = await store.sources.get(request.params.id);
    if (!source) throw notFound(`source ${request.params.id}`);
    return toSourceView(source);
  });

  app.patch(
    '/sources/:id',
    { schema: { params: IdParams, body: PatchSourceBody, response: { 200: ChangedSourceView, 409: ErrorReply, ...errorReplies } } },
    async (request) => {
      const { fields, ignored } = sourceFields(request.body);
      const source = await audited(store, request, (tx) => tx.sources.update(request.params.id, fields), { target: request.params.id }).catch(writeKeyConflict);
      if (!source) throw notFound(`source ${request.params.id}`);
      return { ...toSourceView(source), ...(ignored.length > 0 ? { ignoredFields: ignored } : {}) };
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
