import { Type, type Static } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  applyFilters,
  compileFilter,
  filterCountError,
  MAX_FILTER_TITLE_LENGTH,
  MAX_FILTERS_PER_DESTINATION,
  type CompiledFilter,
  type FilterError,
  type FilterSettings,
} from '../../rules/destination-filters';
import { FORBIDDEN_SEGMENTS } from '../../rules/safe-path';
import type { Store } from '../../store/types';
import { pastedFilterViolation } from '../../rules/pasted-filter';
import { violationMessage } from '../../delivery/webhook-rules';
import { badRequest, notFound } from '../errors';
import { audited } from '../access/audit-trail';
import { errorReplies, IdParams } from './schemas';

/** A path with none of the segments that lead into a prototype (rules/safe-path.ts). */
const SAFE_PATH_PATTERN = `^(?!(?:.*\\.)?(?:${FORBIDDEN_SEGMENTS.join('|')})(?:\\.|$))`;

const PropertyFields = Type.Object({}, {
  additionalProperties: Type.Array(Type.String()),
  propertyNames: Type.String({ pattern: SAFE_PATH_PATTERN }),
  description: 'A top-level object ("" for the message itself) → the keys in it, e.g. {"properties": ["email"], "context": ["ip"]}. No key has a __proto__, constructor or prototype segment.',
});

/** The actions as the Public API writes them; checked by rules/destination-filters.ts so a 400 names the action's field. */
const ActionBody = Type.Object(
  {
    type: Type.String({ description: 'DROP, SAMPLE, DROP_PROPERTIES or ALLOW_PROPERTIES' }),
    // Only the key names are checked here (as well as in compileFilter): a path into a prototype never gets past the schema.
    fields: Type.Optional(Type.Unsafe<Record<string, string[]>>({ type: 'object', propertyNames: { type: 'string', pattern: SAFE_PATH_PATTERN } })),
  },
  { additionalProperties: true, description: '{type: "DROP"}, {type: "SAMPLE", percent: 0–1, path?}, {type: "DROP_PROPERTIES", fields}, {type: "ALLOW_PROPERTIES", fields}' },
);

const ActionView = Type.Union([
  Type.Object({ type: Type.Literal('DROP') }),
  Type.Object({
    type: Type.Literal('SAMPLE'),
    percent: Type.Number({ minimum: 0, maximum: 1 }),
    path: Type.Optional(Type.String({ description: 'The field hashed for the decision; default messageId, so a re-sent message gets the same one.' })),
  }),
  Type.Object({ type: Type.Literal('DROP_PROPERTIES'), fields: PropertyFields }),
  Type.Object({ type: Type.Literal('ALLOW_PROPERTIES'), fields: PropertyFields }),
]);

const filterFields = {
  title: Type.String({ minLength: 1, maxLength: MAX_FILTER_TITLE_LENGTH }),
  description: Type.Optional(Type.String({ maxLength: 1000 })),
  enabled: Type.Boolean(),
  if: Type.String({ minLength: 1, maxLength: 10_000, description: 'An FQL condition (Segment\'s Filter Query Language), or "all".' }),
};

/**
 * What Segment's Public API returns beside a filter (DestinationFilterV1), so an export
 * pastes unchanged: checked against the route (pastedFilterViolation) and never saved.
 */
const exportedFields = {
  id: Type.Optional(Type.String({ maxLength: 100, description: 'Ignored; on PATCH a Switchyard id (`flt_…`) must be the one in the path.' })),
  sourceId: Type.Optional(Type.String({ maxLength: 100, description: 'Ignored when it is the destination\'s source or Segment\'s own id; a 400 when it names another Switchyard source (`src_…`).' })),
  destinationId: Type.Optional(Type.String({ maxLength: 100, description: 'Ignored when it is this destination or Segment\'s own id; a 400 when it names another Switchyard destination (`dst_…`).' })),
  createdAt: Type.Optional(Type.String({ maxLength: 64, description: 'Ignored: Switchyard keeps its own.' })),
  updatedAt: Type.Optional(Type.String({ maxLength: 64, description: 'Ignored: Switchyard keeps its own.' })),
};

const FilterBody = Type.Object(
  { ...filterFields, actions: Type.Array(ActionBody, { minItems: 1, maxItems: 10 }), ...exportedFields },
  { additionalProperties: false, description: "A destination filter exactly as Segment's Public API takes it, or returns it (DestinationFilterV1: its ids and dates accepted and ignored)." },
);

const FilterPatch = Type.Partial(FilterBody, { additionalProperties: false });

const FilterView = Type.Object({
  id: Type.String(),
  destinationId: Type.String(),
  ...filterFields,
  actions: Type.Array(ActionView),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});

const FilterParams = Type.Object({ id: IdParams.properties.id, filterId: Type.String({ minLength: 1, maxLength: 100 }) });

const PreviewBody = Type.Object(
  {
    event: Type.Object({}, { additionalProperties: true, description: 'A message as the destination would be sent it (the webhook body).' }),
    filter: Type.Optional(FilterBody),
  },
  { additionalProperties: false },
);

const PreviewView = Type.Object({
  delivered: Type.Boolean(),
  body: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], { description: 'The body as it would be sent; null when a filter dropped or sampled it out.' }),
  matched: Type.Array(Type.String(), { description: 'Titles of the enabled filters whose condition the event meets.' }),
  filter: Type.Union(
    [
      Type.Object({
        id: Type.Union([Type.String(), Type.Null()], { description: 'The saved filter\'s id; null for a draft.' }),
        title: Type.String(),
        reason: Type.Union([Type.Literal('filters'), Type.Literal('sampled')], { description: 'filters: a DROP stopped it; sampled: a SAMPLE kept it out. The overview counts it under the same word.' }),
      }),
      Type.Null(),
    ],
    { description: 'The filter that dropped or sampled the event out; null when it is delivered.' },
  ),
});

/** A filter error as the API's 400: the field (as the request spells it, under `at`) and the rule, and for FQL the column. */
const filterRejected = (error: FilterError, at = '') => badRequest(`${at}${error.field}: ${error.message}`);

function compiled(id: string, settings: FilterSettings, at = ''): CompiledFilter {
  const result = compileFilter(id, settings);
  if (!result.ok) throw filterRejected(result.error, at);
  return result.filter;
}

/** The request's filter with its actions typed (compileFilter has checked every one), without what only Segment's export carries. */
const settingsOf = (body: Partial<Static<typeof FilterBody>>): FilterSettings => {
  const { id: _id, sourceId: _sourceId, destinationId: _destinationId, createdAt: _createdAt, updatedAt: _updatedAt, ...settings } = body;
  return settings as FilterSettings;
};

/** An export's ids that name another of Switchyard's records than the route does: a 400 (pastedFilterViolation). */
function checkPasted(body: Partial<Static<typeof FilterBody>>, route: { destinationId: string; sourceId: string; filterId?: string }, at = '') {
  const violation = pastedFilterViolation(body, route);
  if (violation) throw badRequest(`${at}${violationMessage(violation)}`);
}

/**
 * Destination filters in Segment's Public API shape, at most 10 per destination. Saved
 * only when the condition parses and every action is valid; applied to messages accepted after.
 */
export const destinationFilterRoutes: FastifyPluginAsyncTypebox<{ store: Store }> = async (app, { store }) => {
  const destinationOf = async (id: string) => {
    const destination = await store.destinations.get(id);
    if (!destination) throw notFound(`destination ${id}`);
    return destination;
  };

  app.post(
    '/destinations/:id/filters',
    { schema: { params: IdParams, body: FilterBody, response: { 201: FilterView, ...errorReplies } } },
    async (request, reply) => {
      const destination = await destinationOf(request.params.id);
      checkPasted(request.body, { destinationId: destination.id, sourceId: destination.sourceId });
      compiled('new', settingsOf(request.body));
      const created = await audited(store, request, (tx) => tx.destinationFilters.create(request.params.id, settingsOf(request.body), MAX_FILTERS_PER_DESTINATION), { target: ({ id }) => id });
      if (!created) throw filterRejected(filterCountError(MAX_FILTERS_PER_DESTINATION)!);
      return reply.code(201).send(created);
    },
  );

  app.get('/destinations/:id/filters', { schema: { params: IdParams, response: { 200: Type.Object({ filters: Type.Array(FilterView) }), ...errorReplies } } }, async (request) => {
    await destinationOf(request.params.id);
    return { filters: await store.destinationFilters.list(request.params.id) };
  });

  app.get('/destinations/:id/filters/:filterId', { schema: { params: FilterParams, response: { 200: FilterView, ...errorReplies } } }, async (request) => {
    const filter = await store.destinationFilters.get(request.params.id, request.params.filterId);
    if (!filter) throw notFound(`filter ${request.params.filterId} of destination ${request.params.id}`);
    return filter;
  });

  app.patch('/destinations/:id/filters/:filterId', { schema: { params: FilterParams, body: FilterPatch, response: { 200: FilterView, ...errorReplies } } }, async (request) => {
    const { id, filterId } = request.params;
    const current = await store.destinationFilters.get(id, filterId);
    if (!current) throw notFound(`filter ${filterId} of destination ${id}`);
    const destination = await destinationOf(id);
    checkPasted(request.body, { destinationId: id, sourceId: destination.sourceId, filterId });
    const { title, description, enabled, if: condition, actions } = { ...current, ...settingsOf(request.body) };
    const settings: FilterSettings = { title, ...(description === undefined ? {} : { description }), enabled, if: condition, actions };
    compiled(filterId, settings);
    const updated = await audited(store, request, (tx) => tx.destinationFilters.update(id, filterId, settings), { target: filterId });
    if (!updated) throw notFound(`filter ${filterId} of destination ${id}`);
    return updated;
  });

  app.delete('/destinations/:id/filters/:filterId', { schema: { params: FilterParams, response: { 204: Type.Null(), ...errorReplies } } }, async (request, reply) => {
    if (!(await audited(store, request, (tx) => tx.destinationFilters.delete(request.params.id, request.params.filterId), { target: request.params.filterId }))) {
      throw notFound(`filter ${request.params.filterId} of destination ${request.params.id}`);
    }
    return reply.code(204).send(null);
  });

  // What the destination would be sent: with `filter`, that filter alone (a draft, as Segment's
  // preview takes one); without, the destination's saved filters. Consent, suppression and the
  // `integrations` object are not part of a filter and not previewed.
  app.post(
    '/destinations/:id/filters/preview',
    { schema: { params: IdParams, body: PreviewBody, response: { 200: PreviewView, ...errorReplies } } },
    async (request) => {
      const destination = await destinationOf(request.params.id);
      const { event, filter } = request.body;
      if (filter) checkPasted(filter, { destinationId: destination.id, sourceId: destination.sourceId }, 'filter.');
      const filters = filter
        ? [compiled('preview', { ...settingsOf(filter), enabled: true }, 'filter.')]
        : (await store.destinationFilters.list(request.params.id)).map((saved) => compiled(saved.id, saved));
      const outcome = applyFilters(event, filters);
      const matched = outcome.matched.map((each) => each.title);
      if ('send' in outcome) return { delivered: true, body: outcome.send, matched, filter: null };
      const stoppedBy = filters.find((each) => each.id === outcome.filterId);
      return { delivered: false, body: null, matched, filter: { id: filter ? null : outcome.filterId, title: stoppedBy?.title ?? '', reason: outcome.stop } };
    },
  );
};
