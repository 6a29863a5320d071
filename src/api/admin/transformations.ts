import { Type, type Static } from '@sinclair/typebox';
import type { preValidationHookHandler } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { conditionMatches } from '../../rules/fql-match';
import { applyTransformations, compileTransformation, type CompiledTransformation, type TransformationRules } from '../../rules/transformations';
import { FUNCTION_METADATA_ID, SWITCHYARD_CATALOG_IDS, WEBHOOKS_ACTIONS_METADATA_ID, WEBHOOKS_METADATA_ID } from '../../segment/destination-shape';
import type { TransformationRecord, TransformationSettings } from '../../store/transformations';
import type { Store } from '../../store/types';
import { audited } from '../access/audit-trail';
import { ApiError, badRequest, notFound } from '../errors';
import { errorReplies, IdParams } from './schemas';

/**
 * Protocols Transformations in Segment's Public API shape (TransformationV1), and the Terraform
 * `segment_transformation` form (snake_case) read as the same object. Saved only when `if` and
 * every path compile (rules/transformations.ts); applied to messages accepted after, at ingest.
 */

const nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));
const Name = Type.String({ minLength: 1, maxLength: 200 });
const Path = Type.String({ minLength: 1, maxLength: 200 });

const rulesFields = {
  name: Name,
  enabled: Type.Boolean(),
  if: Type.String({ minLength: 1, maxLength: 10_000, description: "An FQL condition (Segment's Filter Query Language), or \"all\": `event = 'Order Completed'`, `type = 'identify'`." }),
  drop: Type.Optional(Type.Union([Type.Boolean(), Type.Null()], { description: 'Drop the message when `if` matches; every other transform is then ignored.' })),
  newEventName: nullable(Type.String({ maxLength: 200, description: 'A new `event` name (track messages only).' })),
  propertyRenames: Type.Optional(
    Type.Union([Type.Array(Type.Object({ oldName: Path, newName: Path }, { additionalProperties: false }), { maxItems: 100 }), Type.Null()], {
      description: 'Moves under properties (track, page, screen) or traits (identify, group): a name is relative to them unless it starts with `properties.` or `traits.`; up to 4 levels, `\\.` a literal dot.',
    }),
  ),
  propertyValueTransformations: Type.Optional(
    Type.Union(
      [
        Type.Array(Type.Object({ propertyPaths: Type.Array(Path, { minItems: 1, maxItems: 10 }), propertyValue: Type.String({ maxLength: 1000 }) }, { additionalProperties: false }), {
          maxItems: 10,
        }),
        Type.Null(),
      ],
      { description: 'Sets each path (from the top of the message: `properties.currency`, `context.app.name`, `channel`) to the string; at most 10 paths in all.' },
    ),
  ),
  fqlDefinedProperties: Type.Optional(
    Type.Union([Type.Array(Type.Object({ fql: Type.String({ minLength: 1, maxLength: 1000 }), propertyName: Path }, { additionalProperties: false }), { maxItems: 1 }), Type.Null()], {
      description: 'One property computed by lowercase, uppercase, snakecase, kebabcase or titlecase of a field or a string; not with renames or value transformations.',
    }),
  ),
  allowProperties: Type.Optional(Type.Union([Type.Array(Path, { maxItems: 100 }), Type.Null()], { description: 'Keeps only these names in their objects (relative names as for renames).' })),
};

const scopeFields = {
  sourceId: Type.String({ minLength: 1, maxLength: 100, description: 'The Switchyard source (`src_…`) whose messages it transforms.' }),
  destinationMetadataId: nullable(
    Type.String({ maxLength: 100, description: `Absent or null: every destination of the source. Else the Segment catalog id of the destinations it applies to: ${WEBHOOKS_METADATA_ID} (Webhooks), ${WEBHOOKS_ACTIONS_METADATA_ID} (Webhooks (Actions)), or a destination function's id without \`dfn_\` (the destinations running that function).` }),
  ),
};

/** What GET answers but a save ignores, so a read transformation can be saved back as it is. */
const readOnly = {
  id: Type.Optional(Type.String({ maxLength: 100 })),
  createdAt: Type.Optional(Type.String({ maxLength: 64 })),
  updatedAt: Type.Optional(Type.String({ maxLength: 64 })),
  hashPropertiesConfiguration: Type.Optional(Type.Unknown({ description: 'Not supported: a 400 unless null.' })),
};

const TransformationBody = Type.Object({ ...readOnly, ...scopeFields, ...rulesFields }, { additionalProperties: false, description: "A transformation as Segment's Public API takes it, or Terraform's segment_transformation." });
const TransformationPatch = Type.Partial(TransformationBody, { additionalProperties: false });

const TransformationView = Type.Object({
  id: Type.String(),
  sourceId: Type.String(),
  destinationMetadataId: Type.Union([Type.String(), Type.Null()]),
  name: Type.String(),
  enabled: Type.Boolean(),
  if: Type.String(),
  drop: Type.Optional(Type.Boolean()),
  newEventName: Type.Optional(Type.String()),
  propertyRenames: Type.Optional(Type.Array(Type.Object({ oldName: Type.String(), newName: Type.String() }))),
  propertyValueTransformations: Type.Optional(Type.Array(Type.Object({ propertyPaths: Type.Array(Type.String()), propertyValue: Type.String() }))),
  fqlDefinedProperties: Type.Optional(Type.Array(Type.Object({ fql: Type.String(), propertyName: Type.String() }))),
  allowProperties: Type.Optional(Type.Array(Type.String())),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});

const PreviewBody = Type.Object(
  {
    event: Type.Object({}, { additionalProperties: true, description: 'A message as sent (a webhook body, or a Segment event).' }),
    transformation: Type.Object({ ...readOnly, ...Type.Partial(Type.Object(scopeFields)).properties, ...rulesFields, enabled: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
  },
  { additionalProperties: false },
);
const PreviewView = Type.Object({
  matched: Type.Boolean({ description: 'Whether the event meets `if`.' }),
  dropped: Type.Boolean(),
  changed: Type.Boolean(),
  event: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], { description: 'The event as transformed (as it came when `if` does not match); null when dropped.' }),
});

/** Terraform's `segment_transformation` attribute names, and the API's. */
const TERRAFORM_NAMES: Record<string, string> = {
  source_id: 'sourceId',
  destination_metadata_id: 'destinationMetadataId',
  new_event_name: 'newEventName',
  property_renames: 'propertyRenames',
  property_value_transformations: 'propertyValueTransformations',
  fql_defined_properties: 'fqlDefinedProperties',
  allow_properties: 'allowProperties',
};
const TERRAFORM_ITEM_NAMES: Record<string, string> = { old_name: 'oldName', new_name: 'newName', property_paths: 'propertyPaths', property_value: 'propertyValue', property_name: 'propertyName' };

/** Renames the snake_case keys of a Terraform object in place; a 400 when both spellings are given. */
function camelCased(object: Record<string, unknown>, names: Record<string, string>, at: string): ApiError | undefined {
  for (const [snake, camel] of Object.entries(names)) {
    if (!(snake in object)) continue;
    if (camel in object) return badRequest(`${at}${snake}: give either ${snake} (Terraform's name) or ${camel}, not both`);
    object[camel] = object[snake];
    delete object[snake];
  }
  return undefined;
}

/** A Terraform body's snake_case attributes (and those of its list items) become the API's names before the schema reads them. */
export const readTerraformTransformation: preValidationHookHandler = (request, _reply, done) => {
  const body = request.body as Record<string, unknown> | null;
  if (!body || typeof body !== 'object' || Array.isArray(body)) return done();
  const inner = request.routeOptions.url?.endsWith('/preview') ? body.transformation : body;
  if (!inner || typeof inner !== 'object' || Array.isArray(inner)) return done();
  const at = inner === body ? '' : 'transformation.';
  const target = inner as Record<string, unknown>;
  const error = camelCased(target, TERRAFORM_NAMES, at);
  if (error) return done(error);
  for (const key of ['propertyRenames', 'propertyValueTransformations', 'fqlDefinedProperties']) {
    const list = target[key];
    if (!Array.isArray(list)) continue;
    for (const [i, item] of list.entries()) {
      if (!item || typeof item !== 'object' || Array.isArray(item)) continue;
      const itemError = camelCased(item as Record<string, unknown>, TERRAFORM_ITEM_NAMES, `${at}${key}[${i}].`);
      if (itemError) return done(itemError);
    }
  }
  done();
};

type Body = Partial<Static<typeof TransformationBody>>;

/** The request's fields as saved: nulls (Terraform writes every absent attribute as null) and empty lists left out. */
function rulesOf(body: Body): Omit<TransformationRules, 'name' | 'enabled'> {
  const rules: Omit<TransformationRules, 'name' | 'enabled'> = { if: body.if ?? '' };
  if (body.drop === true) rules.drop = true;
  if (body.newEventName !== undefined && body.newEventName !== null) rules.newEventName = body.newEventName;
  if (body.propertyRenames && body.propertyRenames.length > 0) rules.propertyRenames = body.propertyRenames;
  if (body.propertyValueTransformations && body.propertyValueTransformations.length > 0) rules.propertyValueTransformations = body.propertyValueTransformations;
  if (body.fqlDefinedProperties && body.fqlDefinedProperties.length > 0) rules.fqlDefinedProperties = body.fqlDefinedProperties;
  if (body.allowProperties && body.allowProperties.length > 0) rules.allowProperties = body.allowProperties;
  return rules;
}

function checkUnsupported(body: Body, at = ''): void {
  if (body.hashPropertiesConfiguration !== undefined && body.hashPropertiesConfiguration !== null) {
    throw badRequest(`${at}hashPropertiesConfiguration: hashing properties is not supported; drop the property with allowProperties, or hash it before sending`);
  }
}

/**
 * A destinationMetadataId naming a catalog entry Switchyard has no destination of: the
 * transformation would apply to nothing. A destination function's metadata id (the hex of its
 * `dfn_` id, as Segment names it) is one Switchyard has, when that function exists.
 */
async function checkScope(metadataId: string | null, functions: Pick<Store['functions'], 'get'>): Promise<void> {
  if (metadataId === null || SWITCHYARD_CATALOG_IDS.includes(metadataId)) return;
  if (FUNCTION_METADATA_ID.test(metadataId) && (await functions.get(`dfn_${metadataId}`))?.resourceType === 'DESTINATION') return;
  throw new ApiError(
    422,
    'unsupported_destination',
    `destinationMetadataId: ${metadataId} is a Segment catalog destination Switchyard has none of, so the transformation would apply to nothing; use ${WEBHOOKS_METADATA_ID} (Webhooks), ${WEBHOOKS_ACTIONS_METADATA_ID} (Webhooks (Actions)), a destination function's id without dfn_, or leave it out for the whole source`,
  );
}

function compiled(id: string, settings: TransformationRules, at = ''): CompiledTransformation {
  const result = compileTransformation(id, settings);
  if (!result.ok) throw badRequest(`${at}${result.error.field}: ${result.error.message}`);
  return result.transformation;
}

const view = (record: TransformationRecord) => record;

export const transformationRoutes: FastifyPluginAsyncTypebox<{ store: Store }> = async (app, { store }) => {
  const sourceOf = async (id: string) => {
    if (!(await store.sources.get(id))) throw badRequest(`sourceId: source ${id} not found (a transformation belongs to one Switchyard source, src_…)`);
  };

  app.post('/transformations', { preValidation: readTerraformTransformation, schema: { body: TransformationBody, response: { 201: TransformationView, ...errorReplies } } }, async (request, reply) => {
    const body = request.body;
    checkUnsupported(body);
    const settings: TransformationSettings = { sourceId: body.sourceId, destinationMetadataId: body.destinationMetadataId ?? null, name: body.name, enabled: body.enabled, ...rulesOf(body) };
    compiled('new', settings);
    await checkScope(settings.destinationMetadataId, store.functions);
    await sourceOf(settings.sourceId);
    const created = await audited(store, request, (tx) => tx.transformations.create(settings), { target: ({ id }) => id });
    return reply.code(201).send(view(created));
  });

  app.get(
    '/transformations',
    { schema: { querystring: Type.Object({ sourceId: Type.Optional(Type.String({ maxLength: 100 })) }), response: { 200: Type.Object({ transformations: Type.Array(TransformationView) }), ...errorReplies } } },
    async (request) => ({ transformations: (await store.transformations.list(request.query.sourceId)).map(view) }),
  );

  const found = async (id: string) => {
    const transformation = await store.transformations.get(id);
    if (!transformation) throw notFound(`transformation ${id}`);
    return transformation;
  };

  app.get('/transformations/:id', { schema: { params: IdParams, response: { 200: TransformationView, ...errorReplies } } }, async (request) => view(await found(request.params.id)));

  app.patch(
    '/transformations/:id',
    { preValidation: readTerraformTransformation, schema: { params: IdParams, body: TransformationPatch, response: { 200: TransformationView, ...errorReplies } } },
    async (request) => {
      const current = await found(request.params.id);
      const body = request.body;
      checkUnsupported(body);
      if (body.id !== undefined && body.id.startsWith('tfm_') && body.id !== current.id) throw badRequest(`id: ${body.id} is another transformation than the path's ${current.id}`);
      // A field given replaces the saved one; null (Terraform's absent) clears an optional one.
      const { id: _id, createdAt: _createdAt, updatedAt: _updatedAt, ...saved } = current;
      const merged: Body = { ...saved, ...Object.fromEntries(Object.entries(body).filter(([, value]) => value !== undefined)) };
      const settings: TransformationSettings = {
        sourceId: merged.sourceId!,
        destinationMetadataId: merged.destinationMetadataId ?? null,
        name: merged.name!,
        enabled: merged.enabled!,
        ...rulesOf(merged),
      };
      compiled(current.id, settings);
      await checkScope(settings.destinationMetadataId, store.functions);
      if (settings.sourceId !== current.sourceId) await sourceOf(settings.sourceId);
      const updated = await audited(store, request, (tx) => tx.transformations.update(current.id, settings), { target: current.id });
      if (!updated) throw notFound(`transformation ${current.id}`);
      return view(updated);
    },
  );

  app.delete('/transformations/:id', { schema: { params: IdParams, response: { 204: Type.Null(), ...errorReplies } } }, async (request, reply) => {
    if (!(await audited(store, request, (tx) => tx.transformations.delete(request.params.id), { target: request.params.id }))) throw notFound(`transformation ${request.params.id}`);
    return reply.code(204).send(null);
  });

  // What one transformation makes of an event, without saving it (enabled or not, whatever its scope).
  app.post('/transformations/preview', { preValidation: readTerraformTransformation, schema: { body: PreviewBody, response: { 200: PreviewView, ...errorReplies } } }, async (request) => {
    const { event, transformation } = request.body;
    checkUnsupported(transformation, 'transformation.');
    const draft = compiled('preview', { name: transformation.name, enabled: true, ...rulesOf(transformation) }, 'transformation.');
    const outcome = applyTransformations(event, [draft]);
    if ('drop' in outcome) return { matched: true, dropped: true, changed: false, event: null };
    const changed = outcome.changedBy.length > 0;
    // A matching transformation may leave the event as it was: whether it matched is its own answer.
    const matched = changed || conditionMatches(draft.condition, event);
    return { matched, dropped: false, changed, event: outcome.send };
  });
};
