import { Type, type Static } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Source, Store } from '../../store/types';
import { notFound } from '../errors';
import { audited } from '../access/audit-trail';
import { errorReplies, IdParams } from './schemas';

const SourceView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  writeKeyHint: Type.String({ description: 'Last 4 characters of the write key.' }),
  createdAt: Type.String({ format: 'date-time' }),
});

const CreatedSourceView = Type.Composite([
  SourceView,
  Type.Object({ writeKey: Type.String({ description: 'Shown only in this reply: Switchyard keeps a hash of it.' }) }),
]);

const CreateSourceBody = Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });

function toSourceView(source: Source): Static<typeof SourceView> {
  return { id: source.id, name: source.name, writeKeyHint: source.writeKeyHint, createdAt: source.createdAt };
}

/** Sources: where events come from, each identified by its write key. */
export const sourceRoutes: FastifyPluginAsyncTypebox<{ store: Store }> = async (app, { store }) => {
  app.post(
    '/sources',
    { schema: { body: CreateSourceBody, response: { 201: CreatedSourceView, ...errorReplies } } },
    async (request, reply) => {
      const { source, writeKey } = await audited(store, request, (tx) => tx.sources.create(request.body.name), { target: ({ source }) => source.id });
      return reply.code(201).send({ ...toSourceView(source), writeKey });
    },
  );

  app.get('/sources', { schema: { response: { 200: Type.Object({ sources: Type.Array(SourceView) }), ...errorReplies } } }, async () => ({
    sources: (await store.sources.list()).map(toSourceView),
  }));

  app.get('/sources/:id', { schema: { params: IdParams, response: { 200: SourceView, ...errorReplies } } }, async (request) => {
    const source = await store.sources.get(request.params.id);
    if (!source) throw notFound(`source ${request.params.id}`);
    return toSourceView(source);
  });

  app.delete(
    '/sources/:id',
    { schema: { params: IdParams, response: { 204: Type.Null(), ...errorReplies } } },
    async (request, reply) => {
      if (!(await audited(store, request, (tx) => tx.sources.delete(request.params.id), { target: request.params.id }))) throw notFound(`source ${request.params.id}`);
      return reply.code(204).send(null);
    },
  );
};
