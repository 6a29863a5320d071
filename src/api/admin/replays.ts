import { randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { isReplayOpen, NO_COUNTS, REPLAY_ID_PATTERN, REPLAY_STATUSES, type Replay, type ReplayStatus } from '../../delivery/replay';
import { ReplayChangeUnanswered, type ReplayChange, type Replays } from '../../ports';
import { replayArchiveFrom, replayRange } from '../../delivery/replay-range';
import { compileProgram } from '../../programs/compile-program';
import type { Store } from '../../store/types';
import { ApiError, badRequest, notFound } from '../errors';
import { errorReplies, ErrorReply } from './schemas';
import { actorOf, audited, recordChange, recordDenied } from '../access/audit-trail';

/**
 * Replays of the archive: every archived message of a source received in a range (that a
 * trigger matches) delivered to one destination again, by a Temporal workflow per replay
 * (workflows/replay-archive.ts), which keeps the row this API reads up to date. A
 * blocked-only replay recovers what the tracking plan blocked, to every enabled destination.
 */

const security = [{ adminToken: [] }];

const DEFAULT_LIST_LIMIT = 100;
const MAX_LIST_LIMIT = 1000;

const conflict = (message: string) => new ApiError(409, 'conflict', message);

const Status = Type.Unsafe<ReplayStatus>({ type: 'string', enum: [...REPLAY_STATUSES] });

const NewReplay = Type.Object(
  {
    sourceId: Type.String({ minLength: 1, maxLength: 100, description: 'The source whose archived messages are replayed.' }),
    destinationId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: 'One destination of that source: the only one that receives the replay (it may be newer than the messages: a backfill). Required, except with blockedOnly, which takes none.' }),
    ),
    since: Type.String({ format: 'date-time', description: 'Messages received at or after this time.' }),
    until: Type.String({ format: 'date-time', description: 'Messages received before this time.' }),
    trigger: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'An FQL condition on the archived message (the language of destination filters): only the messages it matches. Needs the scope payloads:read besides operate: its count answers questions about archived bodies.' })),
    dryRun: Type.Optional(Type.Boolean({ description: 'Count what would be sent (matched minus skipped) and send nothing.' })),
    blockedOnly: Type.Optional(
      Type.Boolean({
        description:
          "Recovery: only the archived messages the source's tracking plan blocked at ingest, validated again under today's plan. Those that pass go to every enabled destination of the source, once, with their original messageId (each as the delivery it would have had: a later recovery or resend does not send it again); those still blocked count as skipped.blocked. Takes no destinationId.",
      }),
    ),
  },
  { additionalProperties: false },
);

const ReplayView = Type.Object({
  id: Type.String(),
  sourceId: Type.String(),
  destinationId: Type.Union([Type.String(), Type.Null()], { description: 'null: a blocked-only replay, to every enabled destination of the source.' }),
  blockedOnly: Type.Boolean({ description: "Only what the source's tracking plan blocked at ingest, validated again under today's plan." }),
  since: Type.String({ format: 'date-time' }),
  until: Type.String({ format: 'date-time' }),
  trigger: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'null: every message of the range. Absent to a token without payloads:read: the condition with its count says what archived bodies hold.' })),
  status: Status,
  matched: Type.Integer({ description: 'Archived messages in the range that the trigger matched (an erased user\'s, whose trigger cannot be read, included).' }),
  started: Type.Integer({ description: 'Deliveries started: one per message at most (none in a dry run); a blocked-only replay\'s one delivery goes to every destination the decision lets through.' }),
  delivered: Type.Integer({ description: 'Of those, delivered.' }),
  failed: Type.Integer({ description: 'Of those, ended undelivered (retry window or hold used up, destination switched off meanwhile).' }),
  skipped: Type.Object({
    erased: Type.Integer({ description: 'Matched, not sent: a DELETE regulation erased the user.' }),
    suppressed: Type.Integer({ description: 'Matched, not sent: a SUPPRESS regulation suppresses the user.' }),
    filtered: Type.Integer({ description: "Matched, not sent: the destination's consent, the call's integrations or the destination's filters stop it today (a blocked-only replay: every destination's)." }),
    blocked: Type.Optional(
      Type.Integer({
        description:
          "Matched, not sent: the source's tracking plan, as it is today, blocks it. Absent to a token without payloads:read, and counted in filtered instead: the plan's verdict on one archived body is a yes/no answer about what it holds.",
      }),
    ),
    duplicate: Type.Integer({
      description: 'Matched, not sent, in a blocked-only replay: the message has its delivery already (an earlier blocked-only replay sent it, or its sender sent the messageId again once the plan let it through). A dry run does not look, and counts 0.',
    }),
  }),
  dryRun: Type.Boolean({ description: 'A dry run: counts what would be sent, sends nothing (started stays 0).' }),
  archiveFrom: Type.Optional(
    Type.String({ format: 'date-time', description: 'Present when the range starts before what the archive still held when the replay was made: the oldest moment it could read (creation time minus ARCHIVE_RETENTION); the counts cover only what is after it.' }),
  ),
  createdAt: Type.String({ format: 'date-time' }),
  finishedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

/**
 * A replay as this request may see it: a trigger names values it looked for in archived
 * bodies, and its count says whether they were there, so the trigger is for payloads:read only.
 */
function replayView(request: FastifyRequest, retentionMs: number): (replay: Replay) => Omit<Replay, 'trigger'> & { trigger?: string | null; archiveFrom?: string } {
  const withArchiveFrom = (replay: Replay) => {
    const archiveFrom = replayArchiveFrom(replay, retentionMs);
    return archiveFrom ? { ...replay, archiveFrom } : replay;
  };
  if (actorOf(request).scopes.includes('payloads:read')) return withArchiveFrom;
  // The plan's count too: a plan is a predicate over the archived body, and a range one message wide
  // makes its count a yes/no answer about that body. Without payloads:read it is one of the stops.
  return ({ trigger: _withheld, ...replay }) => {
    const { blocked, ...skipped } = replay.skipped;
    return withArchiveFrom({ ...replay, skipped: { ...skipped, filtered: skipped.filtered + blocked } } as Replay);
  };
}

const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });

export const replayRoutes: FastifyPluginAsyncTypebox<{ store: Store; replays: Replays; archiveRetentionMs: number; maxInFlight: number }> = async (app, { store, replays, archiveRetentionMs, maxInFlight }) => {
  /** Any other shape was never a replay id: unknown, like a well-formed id the store does not have. */
  const find = async (id: string): Promise<Replay> => {
    const replay = new RegExp(REPLAY_ID_PATTERN).test(id) ? await store.replays.get(id) : undefined;
    if (!replay) throw notFound(`replay ${id}`);
    return replay;
  };

  app.post(
    '/replays',
    {
      schema: {
        security,
        body: NewReplay,
        response: {
          202: Type.Object({
            id: Type.String(),
            status: Status,
            archiveFrom: Type.Optional(Type.String({ format: 'date-time', description: 'Present when `since` is before the oldest message still archived (now minus ARCHIVE_RETENTION): the replay reads from here.' })),
          }),
          409: ErrorReply,
          ...errorReplies,
        },
      },
    },
    async (request, reply) => {
      const { sourceId, destinationId, since, until, trigger, dryRun = false, blockedOnly = false } = request.body;
      // A trigger's count (dry run or not) answers yes/no questions about archived bodies
      // (route-exposure.ts), so a trigger is for payloads:read as well as operate.
      if (trigger !== undefined && !actorOf(request).scopes.includes('payloads:read')) {
        await recordDenied(store.audit, request, actorOf(request));
        throw new ApiError(403, 'forbidden', 'trigger: a replay with a trigger needs the scope payloads:read besides operate (its count answers questions about archived bodies)');
      }
      if (archiveRetentionMs <= 0) throw conflict('ARCHIVE_RETENTION is 0: the archive is off, there is nothing to replay');
      const range = replayRange(since, until, Date.now(), archiveRetentionMs);
      if (!range.ok) throw badRequest(`${range.field}: ${range.rule}`);
      // A recovered message gets the one delivery it would have had at ingest, to every destination
      // the decision lets through: recovering it for one destination would leave the others none.
      if (blockedOnly && destinationId !== undefined) {
        throw badRequest('destinationId: a blocked-only replay goes to every enabled destination of the source and takes no destinationId (to replay to one destination, leave out blockedOnly: today\'s plan decides every message of the range)');
      }
      if (!blockedOnly && destinationId === undefined) throw badRequest('destinationId: is required (only a blocked-only replay goes to every enabled destination of the source)');
      if (!(await store.sources.get(sourceId))) throw badRequest(`sourceId: source ${sourceId} does not exist`);
      if (destinationId !== undefined) {
        const destination = await store.destinations.get(destinationId);
        if (destination?.sourceId !== sourceId) throw badRequest(`destinationId: is not a destination of source ${sourceId}`);
      }
      if (trigger !== undefined) {
        const parsed = compileProgram('fql', trigger);
        if (!parsed.ok) throw badRequest(`trigger: ${parsed.error.rule} (column ${parsed.error.column})`);
      }
      const replay: Replay = {
        id: `rpl_${randomBytes(16).toString('hex')}`,
        sourceId,
        destinationId: destinationId ?? null,
        since: new Date(since).toISOString(),
        until: new Date(until).toISOString(),
        trigger: trigger ?? null,
        dryRun,
        blockedOnly,
        status: 'running',
        ...NO_COUNTS,
        createdAt: new Date().toISOString(),
        finishedAt: null,
      };
      // The row first, so the workflow always has one to write to; its audit row with it.
      await audited(store, request, async (tx) => (await tx.replays.create(replay), replay), { target: replay.id });
      try {
        await replays.start({
          id: replay.id,
          sourceId,
          ...(destinationId !== undefined && { destinationId }),
          since: replay.since,
          until: replay.until,
          ...(trigger !== undefined && { trigger }),
          dryRun,
          ...(blockedOnly && { blockedOnly }),
          maxInFlight,
        });
      } catch (err) {
        await store.replays.setStatus(replay.id, 'failed', new Date().toISOString());
        request.log.error({ err, replayId: replay.id }, 'could not start a replay');
        throw new ApiError(503, 'temporal_unavailable', 'the replay was not started: the workflow engine is unavailable; retry later', { 'retry-after': '5' });
      }
      return reply.code(202).send({ id: replay.id, status: replay.status, ...(range.archiveFrom && { archiveFrom: range.archiveFrom }) });
    },
  );

  app.get(
    '/replays',
    {
      schema: {
        security,
        querystring: Type.Object({ limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,4}$', description: `1 to ${MAX_LIST_LIMIT} (default ${DEFAULT_LIST_LIMIT}).` })) }, { additionalProperties: false }),
        response: { 200: Type.Object({ replays: Type.Array(ReplayView) }), ...errorReplies },
      },
    },
    async (request) => {
      const limit = request.query.limit === undefined ? DEFAULT_LIST_LIMIT : Number(request.query.limit);
      if (limit < 1 || limit > MAX_LIST_LIMIT) throw badRequest(`limit: must be from 1 to ${MAX_LIST_LIMIT}`);
      return { replays: (await store.replays.list(limit)).map(replayView(request, archiveRetentionMs)) };
    },
  );

  app.get('/replays/:id', { schema: { security, params: IdParams, response: { 200: ReplayView, ...errorReplies } } }, async (request) => replayView(request, archiveRetentionMs)(await find(request.params.id)));

  for (const change of ['pause', 'resume', 'cancel'] as const satisfies readonly ReplayChange[]) {
    app.post(
      `/replays/:id/${change}`,
      { schema: { security, params: IdParams, response: { 200: ReplayView, 409: ErrorReply, ...errorReplies } } },
      async (request) => {
        const replay = await find(request.params.id);
        if (!isReplayOpen(replay.status)) throw conflict(`id: replay ${replay.id} is ${replay.status}; only a running or paused replay can ${change}`);
        // Returns once the workflow has written the new status.
        try {
          await replays.change(replay.id, change);
          await recordChange(store, request, replay.id);
        } catch (err) {
          if (err instanceof ReplayChangeUnanswered) {
            throw new ApiError(503, 'replay_unanswered', `id: replay ${replay.id} did not answer the ${change} within ${err.waitedMs / 1000} s (no worker running, or Temporal away); nothing changed that it confirmed, retry later`, { 'retry-after': '5' });
          }
          // It ended between the read and the ask: say so, as if it had ended before.
          const now = await find(replay.id);
          if (!isReplayOpen(now.status)) throw conflict(`id: replay ${replay.id} is ${now.status}; only a running or paused replay can ${change}`);
          throw err;
        }
        return replayView(request, archiveRetentionMs)(await find(replay.id));
      },
    );
  }
};
