import { Type } from '@sinclair/typebox';

/** Every error reply (see src/api/errors.ts), declared on each route so the API doc shows it. */
export const ErrorReply = Type.Object({
  code: Type.String({ description: 'Stable machine-readable code, e.g. invalid_request, unauthorized, not_found.' }),
  message: Type.String({ description: 'Names the field and the rule that was broken.' }),
});

export const errorReplies = { 400: ErrorReply, 401: ErrorReply, 404: ErrorReply } as const;

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });

/** What the store's newId makes (store/ids.ts); a filter value of another shape matches nothing and is refused. */
export const SourceIdFilter = Type.String({ pattern: '^src_[0-9a-f]{32}$', description: 'A source id (`src_` and 32 hex digits).' });
export const DestinationIdFilter = Type.String({ pattern: '^dst_[0-9a-f]{32}$', description: 'A destination id (`dst_` and 32 hex digits).' });
