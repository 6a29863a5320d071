import { Type } from '@sinclair/typebox';
import { MESSAGE_TYPES, type CallType } from '../delivery/types';

/** Segment sends ids as strings; some clients send numbers. Both are accepted and delivered as strings. */
const Id = Type.Unsafe<string | number>({ type: ['string', 'number'], maxLength: 256 });
const FreeObject = Type.Object({}, { additionalProperties: true });

/** The JSON shape of one call; cross-field rules (userId or anonymousId, …) live in src/messages/call-rules.ts. */
const messageFields = {
  messageId: Type.Optional(Type.Unsafe<string | number>({ type: ['string', 'number'], maxLength: 200 })),
  userId: Type.Optional(Type.Union([Id, Type.Null()])),
  anonymousId: Type.Optional(Type.Union([Id, Type.Null()])),
  timestamp: Type.Optional(Type.String()),
  originalTimestamp: Type.Optional(Type.String()),
  sentAt: Type.Optional(Type.String()),
  context: Type.Optional(FreeObject),
  integrations: Type.Optional(FreeObject),
  properties: Type.Optional(FreeObject),
  traits: Type.Optional(FreeObject),
  event: Type.Optional(Type.String({ maxLength: 1024 })),
  name: Type.Optional(Type.String({ maxLength: 1024 })),
  category: Type.Optional(Type.String({ maxLength: 1024 })),
  groupId: Type.Optional(Id),
  previousId: Type.Optional(Id),
  writeKey: Type.Optional(Type.String()),
};

export const CallBody = Type.Object(messageFields, { additionalProperties: true });

export const BatchBody = Type.Object(
  {
    batch: Type.Array(
      Type.Object({ ...messageFields, type: Type.Unsafe<CallType>({ type: 'string', enum: [...MESSAGE_TYPES] }) }, { additionalProperties: true }),
      { minItems: 1 },
    ),
    sentAt: Type.Optional(Type.String()),
    context: Type.Optional(FreeObject),
    integrations: Type.Optional(FreeObject),
    writeKey: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

export const Accepted = Type.Object({ success: Type.Literal(true) });
export const ErrorReply = Type.Object({ code: Type.String(), message: Type.String() });
