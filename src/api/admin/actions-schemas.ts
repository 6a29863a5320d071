import { Type } from '@sinclair/typebox';
import { DEFAULT_MAPPING_DATA, DESTINATION_TYPES, MAPPING_METHODS, MAX_MAPPING_HEADERS, MAX_MAPPINGS, type DestinationType, type MappingMethod } from '../../mappings/types';
import { MAX_MAPPING_NAME_LENGTH } from '../../mappings/validate-mappings';

/** Issue 33: the admin API's shapes for Actions destinations, mappings, outbound auth and mutual TLS. */

export const DestinationTypeSchema = Type.Unsafe<DestinationType>({
  type: 'string',
  enum: [...DESTINATION_TYPES],
  description: '`webhooks` (default): the whole event to each URL in order until one accepts it. `actions`: each enabled mapping whose trigger matches sends its own mapped request (docs/api.md, Actions destinations). Fixed at creation.',
});

const Method = Type.Unsafe<MappingMethod>({ type: 'string', enum: [...MAPPING_METHODS], description: 'The request method.' });

export const MappingBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: MAX_MAPPING_NAME_LENGTH, description: 'Unique within the destination; names the mapping in attempts, errors and the preview.' }),
    enabled: Type.Boolean(),
    trigger: Type.String({ maxLength: 4096, description: 'An FQL condition (Segment\'s trigger), e.g. `type = "track" and event = "Order Completed"`; `all` matches every event.' }),
    settings: Type.Object(
      {
        url: Type.String({ minLength: 1, maxLength: 2048 }),
        method: Method,
        headers: Type.Optional(Type.Record(Type.String(), Type.String({ maxLength: 4096 }), { maxProperties: MAX_MAPPING_HEADERS, description: `Up to ${MAX_MAPPING_HEADERS} static headers. Values are write-only: shown as ******** (sent back as ******** they keep their value).` })),
        data: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: `The body: a mapping in Segment's mapping language; default ${JSON.stringify(DEFAULT_MAPPING_DATA)} (the whole event).` })),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false, description: 'A mapping, in the shape Segment\'s Public API returns for a Webhooks (Actions) subscription.' },
);

export const MappingList = (description: string) => Type.Array(MappingBody, { minItems: 1, maxItems: MAX_MAPPINGS, description });

export const MappingView = Type.Object({
  name: Type.String(),
  enabled: Type.Boolean(),
  trigger: Type.String(),
  settings: Type.Object({ url: Type.String(), method: Type.String(), headers: Type.Record(Type.String(), Type.String()), data: Type.Record(Type.String(), Type.Unknown()) }),
  backpressure: Type.Optional(
    Type.Object(
      { until: Type.String({ format: 'date-time' }), reason: Type.String() },
      { description: 'Present while the mapping\'s URL is paused for every message: it answered 429 or 503 with Retry-After. DELETE /admin/destinations/:id/mappings/:name/backpressure ends it.' },
    ),
  ),
});

export const AuthBody = Type.Union(
  [
    Type.Object({ type: Type.Literal('bearer'), token: Type.String({ minLength: 1, maxLength: 4096 }) }, { additionalProperties: false }),
    Type.Object({ type: Type.Literal('basic'), username: Type.String({ maxLength: 1024 }), password: Type.String({ maxLength: 1024 }) }, { additionalProperties: false }),
    Type.Object(
      {
        type: Type.Literal('oauth2'),
        tokenUrl: Type.String({ minLength: 1, maxLength: 2048 }),
        clientId: Type.String({ minLength: 1, maxLength: 1024 }),
        clientSecret: Type.String({ minLength: 1, maxLength: 4096 }),
        scope: Type.Optional(Type.String({ maxLength: 1024 })),
        audience: Type.Optional(Type.String({ maxLength: 1024 })),
      },
      { additionalProperties: false },
    ),
    Type.Null(),
  ],
  { description: 'Outbound authentication to the receiver: bearer token, basic, or OAuth2 client credentials (the worker fetches and caches the token). Secrets are write-only. null clears.' },
);

export const AuthView = Type.Object(
  { type: Type.String(), username: Type.Optional(Type.String()), tokenUrl: Type.Optional(Type.String()), clientId: Type.Optional(Type.String()), scope: Type.Optional(Type.String()), audience: Type.Optional(Type.String()) },
  { description: 'The outbound authentication, without its secrets.' },
);

export const TlsBody = Type.Union(
  [Type.Object({ certificate: Type.String({ minLength: 1, maxLength: 65_536 }), privateKey: Type.String({ minLength: 1, maxLength: 65_536 }) }, { additionalProperties: false }), Type.Null()],
  { description: 'Mutual TLS to the receiver: client certificate and private key, PEM. Write-only. null clears.' },
);
