import { Type, type Static } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { RULE_TYPES, ruleName, ruleProblem } from '../../plans/rule-rules';
import type { NewTrackingPlanRule, Store, TrackingPlan, TrackingPlanRule } from '../../store/types';
import { audited } from '../access/audit-trail';
import { ApiError, badRequest, notFound } from '../errors';
import { ErrorReply, errorReplies, IdParams } from './schemas';
import { keyWarning, readSegmentRule, type SegmentRuleInput } from './tracking-plan-shape';

/** Segment's plan types (`TrackingPlanV1.type`); only the rules of a plan connected to a source decide anything. */
export const PLAN_TYPES = ['LIVE', 'TEMPLATE', 'RULE_LIBRARY', 'PROPERTY_LIBRARY', 'ENGAGE'] as const;

/** At most this many rules a request (Segment's Terraform exports stay far below it). */
const MAX_RULES = 2_000;
const DEFAULT_PAGE = 100;

const PlanView = Type.Object({
  id: Type.String({ description: '`tp_…`' }),
  name: Type.String(),
  description: Type.Optional(Type.String()),
  type: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});

const planFields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Optional(Type.Union([Type.String({ maxLength: 2_000 }), Type.Null()])),
  type: Type.Optional(Type.Union(PLAN_TYPES.map((t) => Type.Literal(t)), { description: 'Default LIVE.' })),
};
const PlanPatch = Type.Partial(Type.Object(planFields), { additionalProperties: false, minProperties: 1 });

const RuleType = Type.Union(RULE_TYPES.map((t) => Type.Literal(t)));
const RuleKey = Type.String({ minLength: 1, maxLength: 200, description: 'The event name (TRACK), or page/screen name; absent (or null, as Terraform writes it) for COMMON, IDENTIFY and GROUP. Kept exactly as given, white space included (flagged in `warnings`).' });
const Version = Type.Integer({ minimum: 1, maximum: 1_000_000 });
const JsonSchema = Type.Object({}, { additionalProperties: true, description: 'JSON Schema of the whole message (draft-07 unless `$schema` names 2019-09 or 2020-12; a draft-04 schema is read in draft-07 words).' });
/** Segment's exports write the schema as a JSON string (Terraform's `jsonencode`) or as an object. */
const GivenSchema = Type.Union([JsonSchema, Type.String({ maxLength: 1_000_000, description: 'The schema as a JSON string, as a Terraform export writes it.' })]);
/** What a GET answer carries that a write does not set: accepted, so the answer can be sent back unchanged. */
const readOnlyRuleFields = {
  createdAt: Type.Optional(Type.Unknown({ description: 'Read-only; accepted and ignored.' })),
  updatedAt: Type.Optional(Type.Unknown({ description: 'Read-only; accepted and ignored.' })),
  deprecatedAt: Type.Optional(Type.Unknown({ description: 'Read-only; accepted and ignored.' })),
  warnings: Type.Optional(Type.Unknown({ description: 'Read-only; accepted and ignored.' })),
};
/** One rule in any of Segment's shapes: the Public API's (`jsonSchema`) or Terraform's (`json_schema`, `key = null`). */
const segmentRule = (extra: Record<string, ReturnType<typeof Type.Optional>> = {}) =>
  Type.Object(
    { type: RuleType, key: Type.Optional(Type.Union([RuleKey, Type.Null()])), version: Version, jsonSchema: Type.Optional(GivenSchema), json_schema: Type.Optional(GivenSchema), ...extra, ...readOnlyRuleFields },
    { additionalProperties: false },
  );

const PlanBody = Type.Object(
  {
    ...planFields,
    rules: Type.Optional(Type.Array(segmentRule(), { maxItems: MAX_RULES, description: "Rules inline, as Terraform's `segment_tracking_plan` carries them." })),
  },
  { additionalProperties: false },
);
const Warnings = Type.Optional(Type.Array(Type.String(), { description: 'What was kept as given but is probably not meant (a rule key with white space around it).' }));

const RuleView = Type.Object({
  type: Type.String(),
  key: Type.Optional(Type.String()),
  jsonSchema: JsonSchema,
  version: Type.Integer(),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
  warnings: Warnings,
});

const PutRules = Type.Object(
  {
    rules: Type.Array(segmentRule(), { maxItems: MAX_RULES }),
    pagination: Type.Optional(Type.Unknown({ description: "A GET answer's paging; accepted and ignored." })),
  },
  { additionalProperties: false },
);
const PatchRules = Type.Object(
  { rules: Type.Array(segmentRule({ newKey: Type.Optional(Type.Union([RuleKey, Type.Null()])) }), { minItems: 1, maxItems: MAX_RULES }) },
  { additionalProperties: false },
);
const DeleteRules = Type.Object(
  { rules: Type.Array(Type.Object({ type: RuleType, key: Type.Optional(Type.Union([RuleKey, Type.Null()])), version: Version }, { additionalProperties: false }), { minItems: 1, maxItems: MAX_RULES }) },
  { additionalProperties: false },
);

// Query strings arrive as text (the app's Ajv does not coerce types): counts are checked as digits.
const Count = (description: string) => Type.String({ pattern: '^(?:[1-9][0-9]{0,2}|1000)$', description });
const RulesQuery = Type.Object({
  count: Type.Optional(Count(`Rules a page, 1 to 1000 (default ${DEFAULT_PAGE}).`)),
  cursor: Type.Optional(Type.String({ maxLength: 500 })),
  'pagination[count]': Type.Optional(Count("Segment's name for `count`.")),
  'pagination[cursor]': Type.Optional(Type.String({ maxLength: 500, description: "Segment's name for `cursor`." })),
});

const Status = Type.Object({ status: Type.Literal('SUCCESS'), warnings: Warnings });
const SourceParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }), sourceId: Type.String({ minLength: 1, maxLength: 100 }) });
const ConnectBody = Type.Object({ sourceId: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false });
const Connection = Type.Object({ trackingPlanId: Type.String(), sourceId: Type.String() });

const withConflict = { ...errorReplies, 409: ErrorReply } as const;

const toView = (plan: TrackingPlan): Static<typeof PlanView> => plan;
const toRuleView = (rule: TrackingPlanRule, at: number): Static<typeof RuleView> => {
  const warning = keyWarning(rule.key, `rules[${at}]`);
  return warning ? { ...rule, warnings: [warning] } : rule;
};

/** The rules of a request in Switchyard's shape, and the warnings to answer with (none: absent). */
function readRules(rules: readonly SegmentRuleInput[]): { rules: Array<NewTrackingPlanRule & { newKey?: string }>; warnings?: string[] } {
  const read = rules.map((rule, i) => readSegmentRule(rule, `rules[${i}]`));
  const warnings = read.flatMap((rule, i) => [keyWarning(rule.key, `rules[${i}]`), keyWarning(rule.newKey, `rules[${i}]`)?.replace('.key:', '.newKey:')].filter((w): w is string => w !== undefined));
  return warnings.length > 0 ? { rules: read, warnings } : { rules: read };
}

/** Every rule of a request checked and compiled before anything is saved: the first problem is the 400. */
function checkRules(rules: ReadonlyArray<{ type: string; key?: string; newKey?: string; jsonSchema: Record<string, unknown>; version: number }>): void {
  const seen = new Set<string>();
  for (const [i, rule] of rules.entries()) {
    const problem = ruleProblem(rule, `rules[${i}]`);
    if (problem) throw badRequest(problem);
    const id = JSON.stringify([rule.type, rule.newKey ?? rule.key ?? '', rule.version]);
    if (seen.has(id)) throw badRequest(`rules[${i}]: ${ruleName(rule)} is given twice`);
    seen.add(id);
  }
}

/**
 * Tracking plans and their rules, in the request shapes of Segment's Public API
 * (an export or a Terraform rules file is sent unchanged); replies are bare objects, as every
 * admin reply. Rules are compiled when saved: a schema that cannot be (a misspelt keyword, a
 * pattern RE2 does not speak) is a 400 naming the rule and the path, and nothing is saved.
 */
export const trackingPlanRoutes: FastifyPluginAsyncTypebox<{ store: Store }> = async (app, { store }) => {
  const plans = store.trackingPlans;
  const existing = async (id: string) => {
    if (!(await plans.get(id))) throw notFound(`tracking plan ${id}`);
  };

  app.post('/tracking-plans', { schema: { body: PlanBody, response: { 201: Type.Composite([PlanView, Type.Object({ warnings: Warnings })]), ...errorReplies } } }, async (request, reply) => {
    const { name, description, type = 'LIVE' } = request.body;
    // Terraform's segment_tracking_plan carries its rules inline: made in the same change, or not at all.
    const inline = request.body.rules ? readRules(request.body.rules) : undefined;
    if (inline) checkRules(inline.rules);
    const plan = await audited(
      store,
      request,
      async (tx) => {
        const made = await tx.trackingPlans.create({ name, ...(description !== undefined && description !== null && { description }), type });
        if (inline) await tx.trackingPlans.replaceRules(made.id, inline.rules);
        return made;
      },
      { target: (made) => made.id },
    );
    return reply.code(201).send({ ...toView(plan), ...(inline?.warnings && { warnings: inline.warnings }) });
  });

  app.get('/tracking-plans', { schema: { response: { 200: Type.Object({ trackingPlans: Type.Array(PlanView) }), ...errorReplies } } }, async () => ({
    trackingPlans: (await plans.list()).map(toView),
  }));

  app.get('/tracking-plans/:id', { schema: { params: IdParams, response: { 200: PlanView, ...errorReplies } } }, async (request) => {
    const plan = await plans.get(request.params.id);
    if (!plan) throw notFound(`tracking plan ${request.params.id}`);
    return toView(plan);
  });

  app.patch('/tracking-plans/:id', { schema: { params: IdParams, body: PlanPatch, response: { 200: PlanView, ...errorReplies } } }, async (request) => {
    const { description, ...rest } = request.body;
    const changes = description === null ? { ...rest, description: '' } : description === undefined ? rest : { ...rest, description };
    const plan = await audited(store, request, (tx) => tx.trackingPlans.update(request.params.id, changes), { target: request.params.id });
    if (!plan) throw notFound(`tracking plan ${request.params.id}`);
    return toView(plan);
  });

  app.delete('/tracking-plans/:id', { schema: { params: IdParams, response: { 204: Type.Null(), ...errorReplies } } }, async (request, reply) => {
    if (!(await audited(store, request, (tx) => tx.trackingPlans.delete(request.params.id), { target: request.params.id }))) throw notFound(`tracking plan ${request.params.id}`);
    return reply.code(204).send(null);
  });

  app.get(
    '/tracking-plans/:id/rules',
    {
      schema: {
        params: IdParams,
        querystring: RulesQuery,
        response: { 200: Type.Object({ rules: Type.Array(RuleView), pagination: Type.Object({ current: Type.String(), next: Type.Optional(Type.String()), totalEntries: Type.Integer() }) }), ...errorReplies },
      },
    },
    async (request) => {
      await existing(request.params.id);
      const count = Number(request.query.count ?? request.query['pagination[count]'] ?? DEFAULT_PAGE);
      const cursor = request.query.cursor ?? request.query['pagination[cursor]'];
      const page = await plans.rules(request.params.id, count, cursor);
      return { rules: page.rules.map((rule, i) => toRuleView(rule, i)), pagination: { current: cursor ?? '', ...(page.next && { next: page.next }), totalEntries: page.total } };
    },
  );

  app.put('/tracking-plans/:id/rules', { schema: { params: IdParams, body: PutRules, response: { 200: Status, ...errorReplies } } }, async (request) => {
    const { rules, warnings } = readRules(request.body.rules);
    checkRules(rules);
    const done = await audited(store, request, (tx) => tx.trackingPlans.replaceRules(request.params.id, rules), { target: request.params.id });
    if (!done) throw notFound(`tracking plan ${request.params.id}`);
    return { status: 'SUCCESS' as const, ...(warnings && { warnings }) };
  });

  app.patch('/tracking-plans/:id/rules', { schema: { params: IdParams, body: PatchRules, response: { 200: Status, ...errorReplies } } }, async (request) => {
    const { rules, warnings } = readRules(request.body.rules);
    checkRules(rules);
    const done = await audited(store, request, (tx) => tx.trackingPlans.upsertRules(request.params.id, rules), { target: request.params.id });
    if (!done) throw notFound(`tracking plan ${request.params.id}`);
    return { status: 'SUCCESS' as const, ...(warnings && { warnings }) };
  });

  app.delete('/tracking-plans/:id/rules', { schema: { params: IdParams, body: DeleteRules, response: { 200: Status, ...errorReplies } } }, async (request) => {
    const done = await audited(store, request, (tx) => tx.trackingPlans.deleteRules(request.params.id, request.body.rules.map(({ key, ...rule }) => (key === null || key === undefined ? rule : { ...rule, key }))), { target: request.params.id });
    if (!done) throw notFound(`tracking plan ${request.params.id}`);
    return { status: 'SUCCESS' as const };
  });

  app.get('/tracking-plans/:id/sources', { schema: { params: IdParams, response: { 200: Type.Object({ sourceIds: Type.Array(Type.String()) }), ...errorReplies } } }, async (request) => {
    await existing(request.params.id);
    return { sourceIds: await plans.sources(request.params.id) };
  });

  app.post('/tracking-plans/:id/sources', { schema: { params: IdParams, body: ConnectBody, response: { 200: Connection, 201: Connection, ...withConflict } } }, async (request, reply) => {
    const { sourceId } = request.body;
    let outcome: Awaited<ReturnType<Store['trackingPlans']['connect']>> = 'missing';
    // Only a new connection is a change to audit: `already`, `taken` and `missing` write nothing.
    await audited(
      store,
      request,
      async (tx) => {
        outcome = await tx.trackingPlans.connect(request.params.id, sourceId);
        return outcome === 'connected' ? outcome : undefined;
      },
      { target: `${request.params.id}:${sourceId}` },
    );
    if (outcome === 'missing') throw notFound(`tracking plan ${request.params.id} or source ${sourceId}`);
    if (outcome === 'taken') throw new ApiError(409, 'conflict', `sourceId: source ${sourceId} is connected to another tracking plan; a source has at most one (disconnect it there first)`);
    return reply.code(outcome === 'connected' ? 201 : 200).send({ trackingPlanId: request.params.id, sourceId });
  });

  app.delete('/tracking-plans/:id/sources/:sourceId', { schema: { params: SourceParams, response: { 204: Type.Null(), ...errorReplies } } }, async (request, reply) => {
    const { id, sourceId } = request.params;
    if (!(await audited(store, request, (tx) => tx.trackingPlans.disconnect(id, sourceId), { target: `${id}:${sourceId}`, changed: [] }))) throw notFound(`source ${sourceId} on tracking plan ${id}`);
    return reply.code(204).send(null);
  });
};
