import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AuditRecord, Store } from '../../store/types';
import { badRequest } from '../errors';
import { errorReplies } from './schemas';

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;

// Query strings arrive as text (the app's Ajv does not coerce types), so the limit is checked as digits.
const AuditQuery = Type.Object(
  {
    since: Type.Optional(Type.String({ format: 'date-time', description: 'Rows at or after this time.' })),
    until: Type.Optional(Type.String({ format: 'date-time', description: 'Rows before this time.' })),
    actor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: "A token's name or id (`ADMIN_TOKEN`: the bootstrap token)." })),
    action: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'e.g. destination.update, token.create; a denied request that changes nothing: its method and route.' })),
    target: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'The id of what was changed.' })),
    limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,4}$', description: `1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT}).` })),
    cursor: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]+$', maxLength: 400, description: 'nextCursor of the previous page.' })),
  },
  { additionalProperties: false },
);

const AuditView = Type.Object({
  id: Type.String(),
  at: Type.String({ format: 'date-time' }),
  actor: Type.Object({ tokenId: Type.Union([Type.String(), Type.Null()]), name: Type.Union([Type.String(), Type.Null()], { description: 'null: no valid token was presented.' }) }),
  action: Type.String(),
  target: Type.Union([Type.String(), Type.Null()]),
  outcome: Type.Unsafe<AuditRecord['outcome']>({ type: 'string', enum: ['success', 'denied'], description: 'success: the change was made (in the same transaction as this row); denied: 401 or 403.' }),
  requestId: Type.String(),
  ip: Type.String(),
  changed: Type.Array(Type.String(), { description: 'The names of the fields set, never their values.' }),
});

/** The cursor is the last row of a page: rows are read newest first, by (at, id). */
const encodeCursor = ({ at, id }: AuditRecord) => Buffer.from(JSON.stringify([at, id])).toString('base64url');

function decodeCursor(cursor: string): { at: string; id: string } {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (typeof at === 'string' && typeof id === 'string') return { at, id };
  } catch {
    // Falls through to the 400.
  }
  throw badRequest('cursor: is not a nextCursor this API returned');
}

/** The audit log, newest first; scope admin. */
export const auditRoutes: FastifyPluginAsyncTypebox<{ store: Store }> = async (app, { store }) => {
  app.get(
    '/audit',
    { schema: { querystring: AuditQuery, response: { 200: Type.Object({ entries: Type.Array(AuditView), nextCursor: Type.Optional(Type.String({ description: 'Absent on the last page.' })) }), ...errorReplies } } },
    async (request) => {
      const { since, until, actor, action, target, cursor } = request.query;
      const limit = request.query.limit === undefined ? DEFAULT_LIMIT : Number(request.query.limit);
      if (limit < 1 || limit > MAX_LIMIT) throw badRequest(`limit: must be from 1 to ${MAX_LIMIT}`);
      if (since !== undefined && until !== undefined && Date.parse(since) >= Date.parse(until)) throw badRequest('until: must be later than since');
      const iso = (value: string | undefined) => value && new Date(value).toISOString();
      const entries = await store.audit.list({ since: iso(since), until: iso(until), actor, action, target, ...(cursor && { after: decodeCursor(cursor) }), limit: limit + 1 });
      const page = entries.slice(0, limit);
      return { entries: page, ...(entries.length > limit && { nextCursor: encodeCursor(page[page.length - 1]) }) };
    },
  );
};
