import { Type } from '@sinclair/typebox';

/** Every error reply (see src/api/errors.ts), declared on each route so the API doc shows it. */
export const ErrorReply = Type.Object({
  code: Type.String({ description: 'Stable machine-readable code, e.g. invalid_request, unauthorized, not_found.' }),
  message: Type.String({ description: 'Names the field and the rule that was broken.' }),
});

export const errorReplies = { 400: ErrorReply, 401: ErrorReply, 404: ErrorReply } as const;

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });
