import { randomUUID } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { StopReason } from '../../delivery/stop-reasons';
import type { DeliveryPolicy } from '../../delivery/types';
import { acceptCall } from '../../messages/accept-calls';
import { destinationRulesReader } from '../../messages/destination-rules';
import { deliveryPlanner, outgoing } from '../../messages/plan-deliveries';
import { bodySealer } from '../../messages/seal-bodies';
import { suppressedUsers } from '../../messages/suppressed-users';
import { stoppedBy, testCall } from '../../messages/test-event';
import { isAboutSuppressed } from '../../delivery/suppression';
import type { AttemptRecord, Deliveries } from '../../ports';
import type { Keyring } from '../../privacy/keyring';
import type { Store } from '../../store/types';
import { recordChange } from '../access/audit-trail';
import { ApiError, badRequest, notFound } from '../errors';
import { ErrorReply, errorReplies, IdParams } from './schemas';

/**
 * How long the answer waits for the test's first attempt. Long enough for a receiver that answers
 * within a few seconds; a slower one, a held destination or a retry backoff is answered `pending`
 * and the attempt shows in the delivery's page when it ends. The delivery goes on either way.
 */
export const TEST_ATTEMPT_WAIT_MS = 10_000;
const POLL_MS = 200;

const TestBody = Type.Object(
  {
    event: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description: 'A Segment event (track, identify, …) as a source would send it; its messageId is replaced by a fresh test-… one. Absent: a sample track "Switchyard Test Event".',
      }),
    ),
  },
  { additionalProperties: false },
);

const AttemptView = Type.Object({
  outcome: Type.Union([Type.Literal('success'), Type.Literal('retry'), Type.Literal('permanent')]),
  httpStatus: Type.Optional(Type.Integer({ description: "The receiver's response status; absent when none came (a timeout, a refused connection or address)." })),
  durationMs: Type.Optional(Type.Integer({ minimum: 0 })),
  error: Type.Optional(Type.String({ description: "Why the attempt failed, as the delivery's attempts show it." })),
  webhookIndex: Type.Integer({ minimum: 0 }),
  url: Type.Optional(Type.String({ description: 'Scheme, host and path: no user info, query or token.' })),
  mapping: Type.Optional(Type.String({ description: 'The actions mapping the attempt sent.' })),
  startedAt: Type.Optional(Type.String({ format: 'date-time' })),
});

const TestView = Type.Object({
  status: Type.Union([Type.Literal('attempted'), Type.Literal('pending'), Type.Literal('filtered')], {
    description: "attempted: the first attempt ended (see attempt); pending: it had not within the wait (or the destination is paused: held until resumed), the delivery goes on; filtered: the destination's rules stopped the event, nothing was sent.",
  }),
  sourceId: Type.String(),
  messageId: Type.String({ description: "The test delivery's message id (test-…): GET /admin/sources/:sourceId/deliveries/:messageId shows all its attempts." }),
  attempt: Type.Optional(AttemptView),
  filtered: Type.Optional(
    Type.Object({
      reason: Type.String({ description: "The overview's word for the rule that stopped it: filters, sampled, transformation, consent, integrations, suppressed, trigger." }),
      id: Type.Optional(Type.String({ description: 'The filter or transformation that stopped it.' })),
      message: Type.String({ description: 'e.g. filtered by filter "Drop test users"' }),
    }),
  ),
});

const conflict = (message: string) => new ApiError(409, 'conflict', message);

/** The rule that stopped the test, named: a filter by its title, a transformation by its name. */
async function stopView(store: Store, sourceId: string, destinationId: string, stop: StopReason, id: string | undefined) {
  let name: string | undefined;
  if (id && (stop === 'filters' || stop === 'sampled')) name = (await store.destinationFilters.list(destinationId)).find((filter) => filter.id === id)?.title;
  if (id && stop === 'transformation') name = (await store.transformations.list(sourceId)).find((transformation) => transformation.id === id)?.name;
  return { reason: stop, ...(id && { id }), message: stoppedBy(stop, name) };
}

const attemptView = ({ outcome, httpStatus, durationMs, error, webhookIndex, url, mapping, startedAt }: AttemptRecord) => ({
  outcome,
  ...(httpStatus !== undefined && { httpStatus }),
  ...(durationMs !== undefined && { durationMs }),
  ...(error !== undefined && { error }),
  webhookIndex,
  ...(url !== undefined && { url }),
  ...(mapping !== undefined && { mapping }),
  ...(startedAt !== undefined && { startedAt }),
});

/**
 * `POST /admin/destinations/:id/test`: a real delivery of one event to this destination alone,
 * through the same decision as ingestion (consent, integrations, suppression, the source's
 * transformations, the destination's filters, an actions destination's triggers), then the same
 * workflow: mapping, insert function, signature and retries. Nothing else of ingestion happens: no
 * profile, archive, tracking plan or overview count. The answer waits a bounded time for the first attempt.
 */
export const destinationTestRoutes: FastifyPluginAsyncTypebox<{ store: Store; deliveries: Deliveries; policy: DeliveryPolicy; keyring: Keyring | undefined; attemptWaitMs?: number }> = async (
  app,
  { store, deliveries, policy, keyring, attemptWaitMs = TEST_ATTEMPT_WAIT_MS },
) => {
  const rulesOf = destinationRulesReader(store.destinationFilters, (message, filterId) => app.log.warn({ filterId }, message), store.transformations);
  const seal = keyring && bodySealer(store.dataKeys, keyring);

  app.post(
    '/destinations/:id/test',
    {
      // A bare POST (no body at all) sends the sample: read as `{}` before the schema looks.
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: { params: IdParams, body: TestBody, response: { 200: TestView, 202: TestView, ...errorReplies, 409: ErrorReply } },
    },
    async (request, reply) => {
      const destinationId = request.params.id;
      const destination = await store.destinations.get(destinationId);
      if (!destination) throw notFound(`destination ${destinationId}`);
      if (!destination.enabled) throw conflict(`enabled: destination ${destinationId} is switched off; switch it on to send a test event`);
      const call = testCall(request.body.event);
      if ('problem' in call) throw badRequest(call.problem);
      const messageId = `test-${randomUUID()}`;
      const message = acceptCall(call, Date.now(), undefined, () => messageId);
      const suppressed = isAboutSuppressed(message, await suppressedUsers(store.suppressions, [message]));
      const integrations = call.fields.integrations as Record<string, unknown> | undefined;
      // This destination alone, as it is enabled now; the first stop the decision records is the test's answer.
      let stop: { reason: StopReason; id?: string } | undefined;
      const recorder = { received: () => undefined, filtered: (_id: string, _at: number, reason: StopReason, id?: string) => void (stop ??= { reason, id }) };
      const only = { listEnabled: async (sourceId: string) => (await store.destinations.listEnabled(sourceId)).filter((enabled) => enabled.id === destinationId) };
      const plan = await deliveryPlanner(only, policy, seal, { rulesOf })(destination.sourceId, [outgoing(message, { integrations, suppressed })], undefined, recorder);
      const sourceId = destination.sourceId;
      if (plan.status === 'no_destinations') throw conflict(`enabled: destination ${destinationId} is switched off; switch it on to send a test event`);
      if (plan.inputs.length === 0) {
        await recordChange(store, request, destinationId);
        const { reason, id } = stop ?? { reason: 'filters' as const };
        return { status: 'filtered' as const, sourceId, messageId, filtered: await stopView(store, sourceId, destinationId, reason, id) };
      }
      await deliveries.start(plan.inputs);
      // Audited once Temporal holds it: a test that never started changed nothing.
      await recordChange(store, request, destinationId);
      // A paused destination holds it until resumed: no attempt can come within any wait.
      const first = destination.paused ? undefined : await firstAttempt(deliveries, sourceId, messageId, destinationId, attemptWaitMs);
      if (!first) return reply.code(202).send({ status: 'pending', sourceId, messageId });
      return { status: 'attempted' as const, sourceId, messageId, attempt: attemptView(first) };
    },
  );
};

/** The delivery's first attempt to this destination once its history shows it, or undefined past the wait. */
async function firstAttempt(deliveries: Deliveries, sourceId: string, messageId: string, destinationId: string, waitMs: number): Promise<AttemptRecord | undefined> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const history = await deliveries.history(sourceId, messageId);
    const attempt = history?.destinations.find((destination) => destination.destinationId === destinationId)?.attempts[0];
    if (attempt) return attempt;
    if (Date.now() + POLL_MS > deadline) return undefined;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
