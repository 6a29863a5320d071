import { Type } from '@sinclair/typebox';
import { DEFAULT_MAPPING_DATA, DESTINATION_TYPES, MAPPING_METHODS, MAX_MAPPING_HEADERS, MAX_MAPPINGS, type DestinationType, type MappingMethod } from '../../mappings/types';
import { MAX_MAPPING_NAME_LENGTH } from '../../mappings/validate-mappings';

/** The admin API's shapes for Actions destinations, mappings, outbound auth and mutual TLS. */

export const DestinationTypeSchema = Type.Unsafe<DestinationType>({
  type: 'string',
  enum: [...DESTINATION_TYPES],
  description: '`webhooks` (default): the whole event to each URL in order until one accepts it. `actions`: each enabled mapping whose trigger matches sends its own mapped request (docs/api.md, Actions destinations). Fixed at creation.',
});

const SegmentId = (description: string) => Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()], { description }));

/** Segment's ids of a subscription, in its Public API's camelCase and its Terraform provider's snake_case: read, checked, ignored. */
const segmentSubscriptionIds = {
  id: SegmentId('Segment\'s subscription id: ignored (a mapping is named by `name`).'),
  actionId: SegmentId('Segment\'s action id: ignored.'),
  actionSlug: SegmentId('Segment\'s action slug (e.g. `send`): ignored.'),
  modelId: SegmentId('Segment\'s Reverse ETL model: ignored.'),
  destinationId: SegmentId('Ignored when it is this destination or Segment\'s own id; a 400 when it names another Switchyard destination (`dst_…`).'),
  reverseETLSchedule: Type.Optional(Type.Null({ description: 'Segment\'s Reverse ETL schedule: only null (none).' })),
  action_id: SegmentId('Terraform\'s `action_id`: ignored.'),
  model_id: SegmentId('Terraform\'s `model_id`: ignored.'),
  destination_id: SegmentId('Terraform\'s `destination_id`: as `destinationId`.'),
  reverse_etl_schedule: Type.Optional(Type.Null({ description: 'Terraform\'s `reverse_etl_schedule`: only null (none).' })),
};

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
        enable_batching: Type.Optional(Type.Boolean({ description: 'Segment\'s "Send a batch": accepted as false and ignored; true is a 400 until batching exists.' })),
        batch_size: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 10_000 }), Type.String({ pattern: '^[0-9]{1,5}$' })], { description: 'Segment\'s batch size (its exports hold a number or a string of digits; 0 beside `enable_batching: false`): accepted and ignored.' })),
        batch_keys: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 10, description: 'Segment\'s batch keys: accepted and ignored.' })),
        __segment_internal_directive: Type.Optional(Type.Unknown({ description: "Segment's Linked Events enrichment: refused with a 400 saying what would be lost (Switchyard cannot run it)." })),
        __segment_entities: Type.Optional(Type.Unknown({ description: "Segment's Linked Audiences entities: refused with a 400 saying what would be lost (Switchyard has no warehouse to read them from)." })),
      },
      { additionalProperties: false, description: 'The mapping\'s settings; a JSON string holding them (Terraform\'s `settings = jsonencode({…})`) is read as that JSON, under the same rules.' },
    ),
    ...segmentSubscriptionIds,
  },
  { additionalProperties: false, description: 'A mapping, in the shape Segment\'s Public API returns for a Webhooks (Actions) subscription (its ids accepted and ignored) or its Terraform provider writes.' },
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
