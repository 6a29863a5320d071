import { Type, type Static } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { SCOPES, scopesBeyond, type Scope } from '../../access/scopes';
import type { AdminToken, Store } from '../../store/types';
import { ApiError, badRequest, notFound } from '../errors';
import { actorOf, audited } from '../access/audit-trail';
import { ErrorReply, errorReplies, IdParams } from './schemas';

const ScopeName = Type.Unsafe<Scope>({
  type: 'string',
  enum: [...SCOPES],
  description:
    '`read`: sources, destinations, health, deliveries\' metadata. `payloads:read`: event bodies and answers about them (the codec server, a delivery\'s message and plaintext userId, replay triggers). `destinations:write`: sources, destinations, filters, webhooks, Personas definitions: where events go. `operate`: redeliver, replays (a trigger needs payloads:read too), syncs, clearing backpressure. `regulations`: suppress, delete (and read regulations). `admin`: tokens and the audit log.',
});

const CreateTokenBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, description: 'Who or what uses it; the audit log names the token by it.' }),
    scopes: Type.Array(ScopeName, { minItems: 1, maxItems: SCOPES.length, uniqueItems: true, description: 'Only scopes the calling token has itself.' }),
    expiresAt: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'After this the token answers 401; absent or null: never.' })),
  },
  { additionalProperties: false },
);

const TokenView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  scopes: Type.Array(ScopeName),
  createdAt: Type.String({ format: 'date-time' }),
  expiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'To the minute: written at most once a minute per API process.' }),
  revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

const CreatedTokenView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  scopes: Type.Array(ScopeName),
  expiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  token: Type.String({ description: 'Shown only in this reply (`swy_…`): Switchyard keeps a hash of it.' }),
});

const toView = (token: AdminToken): Static<typeof TokenView> => token;

/** Admin tokens with scopes; a token mints only scopes it has, and a revocation holds at once. */
export const tokenRoutes: FastifyPluginAsyncTypebox<{ store: Store; clock?: () => number }> = async (app, { store, clock = Date.now }) => {
  app.post('/tokens', { schema: { body: CreateTokenBody, response: { 201: CreatedTokenView, ...errorReplies, 403: ErrorReply } } }, async (request, reply) => {
    const { name, scopes, expiresAt = null } = request.body;
    if (expiresAt !== null && Date.parse(expiresAt) <= clock()) throw badRequest('expiresAt: must be in the future');
    const beyond = scopesBeyond(actorOf(request).scopes, scopes);
    if (beyond.length > 0) throw new ApiError(403, 'forbidden', `scopes: this token cannot grant scopes it lacks: ${beyond.join(', ')}`);
    const created = await audited(store, request, (tx) => tx.tokens.create({ name, scopes, expiresAt: expiresAt && new Date(expiresAt).toISOString() }), { target: ({ token }) => token.id });
    return reply.code(201).send({ id: created.token.id, name, scopes, expiresAt: created.token.expiresAt, token: created.secret });
  });

  app.get('/tokens', { schema: { response: { 200: Type.Object({ tokens: Type.Array(TokenView) }), ...errorReplies } } }, async () => ({ tokens: (await store.tokens.list()).map(toView) }));

  app.delete('/tokens/:id', { schema: { params: IdParams, response: { 204: Type.Null(), ...errorReplies } } }, async (request, reply) => {
    const { id } = request.params;
    if (!(await audited(store, request, (tx) => tx.tokens.revoke(id, new Date(clock()).toISOString()), { target: id, changed: ['revokedAt'] }))) throw notFound(`token ${id}`);
    return reply.code(204).send(null);
  });
};
