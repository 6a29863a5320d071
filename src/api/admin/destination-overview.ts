import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { DESTINATION_OUTCOMES, type DestinationOutcome } from '../../delivery/destination-outcomes';
import { FILTERED_REASONS, summarizeFiltered } from '../../delivery/message-counts';
import { minuteOf, MINUTE_MS } from '../../delivery/webhook-health';
import { MESSAGE_COUNT_RETENTION_MINUTES } from '../../messages/message-count-recorder';
import type { Deliveries } from '../../ports';
import type { Store } from '../../store/types';
import { badRequest, notFound } from '../errors';
import { errorReplies, IdParams } from './schemas';

const Count = Type.Integer({ minimum: 0 });

const OverviewQuery = Type.Object({
  since: Type.Optional(Type.String({ format: 'date-time', description: 'Start of the window (default: 24 hours before `until`). Counts are per minute: the window starts at the minute `since` falls in.' })),
  until: Type.Optional(Type.String({ format: 'date-time', description: 'End of the window (default: now), exclusive; the minute it falls in is included.' })),
});

export const Overview = Type.Object({
  since: Type.String({ format: 'date-time' }),
  until: Type.String({ format: 'date-time' }),
  received: Type.Integer({ minimum: 0, description: "Messages of the destination's source accepted in the window." }),
  filtered: Type.Object(
    { ...(Object.fromEntries(FILTERED_REASONS.map((reason) => [reason, Count])) as Record<(typeof FILTERED_REASONS)[number], typeof Count>), stopped: Count },
    {
      description:
        "Messages this destination did not get, each under the first rule that stopped it. Decided at ingest: plan (the source's tracking plan blocked it), integrations (the call's integrations object), consent (its consent categories), suppressed (a SUPPRESS regulation), filters (a DROP filter, or one that left nothing), sampled (a SAMPLE filter), transformation (a transformation with drop), trigger (no mapping's trigger matched). At send time: stopped (the destination was switched off or lost its URLs or mapping, or a regulation stopped the delivery, after it started).",
    },
  ),
  delivered: Type.Integer({ minimum: 0, description: "Deliveries to this destination started in the window that succeeded at this destination (another destination's outcome is not counted here)." }),
  retrying: Type.Integer({ minimum: 0, description: 'Deliveries to this destination started in the window still under way there (first attempt or retrying).' }),
  failed: Type.Integer({ minimum: 0, description: 'Deliveries to this destination started in the window that gave up there.' }),
  replayed: Type.Object(Object.fromEntries(DESTINATION_OUTCOMES.map((outcome) => [outcome, Count])) as Record<DestinationOutcome, typeof Count>, {
    description: "Replayed deliveries to this destination started in the window, by outcome: apart from the counts above, since a replay's messages were received before.",
  }),
  byFilter: Type.Array(Type.Object({ id: Type.String(), title: Type.String(), dropped: Count }), { description: 'Messages each filter dropped or sampled out in the window (a deleted filter shows its id as title).' }),
  transformations: Type.Object(
    {
      changed: Type.Integer({ minimum: 0, description: 'Messages this destination got that a transformation changed (one per message and transformation that changed it).' }),
      dropped: Type.Integer({ minimum: 0, description: 'Messages a transformation dropped for this destination: the same number as filtered.transformation.' }),
      byTransformation: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), changed: Count, dropped: Count }), { description: 'Per transformation (a deleted one shows its id as name).' }),
    },
    { description: "What the source's transformations (and those scoped to this destination's kind) did to the window's messages for this destination." },
  ),
});

/** Filter titles by id for `byFilter`, when the filters store exists. */
export type FilterTitles = (destinationId: string) => Promise<Map<string, string>>;
/** Transformation names by id for `transformations.byTransformation` (the destination's source's). */
export type TransformationNames = (sourceId: string) => Promise<Map<string, string>>;

/**
 * Where every message went, Segment's Delivery Overview: received and filtered come from
 * the API processes' per-minute counts (message-count-recorder.ts), recorded once Temporal holds the
 * request's deliveries; delivered / retrying / failed / stopped from Temporal visibility, each
 * delivery under this destination's own outcome (SwitchyardOutcomes), replays apart.
 * For a window whose deliveries all started on this version: received = delivered + filtered
 * (every reason, stopped included) + retrying + failed.
 */
export const destinationOverviewRoutes: FastifyPluginAsyncTypebox<{ store: Store; deliveries: Deliveries; filterTitles?: FilterTitles; transformationNames?: TransformationNames; clock?: () => number }> = async (
  app,
  { store, deliveries, filterTitles, transformationNames, clock = Date.now },
) => {
  app.get('/destinations/:id/overview', { schema: { params: IdParams, querystring: OverviewQuery, response: { 200: Overview, ...errorReplies } } }, async (request) => {
    const destination = await store.destinations.get(request.params.id);
    if (!destination) throw notFound(`destination ${request.params.id}`);
    const untilMs = request.query.until !== undefined ? Date.parse(request.query.until) : clock();
    const sinceMs = request.query.since !== undefined ? Date.parse(request.query.since) : untilMs - 24 * 60 * MINUTE_MS;
    if (sinceMs >= untilMs) throw badRequest('until: must be later than since');
    if (untilMs - sinceMs > MESSAGE_COUNT_RETENTION_MINUTES * MINUTE_MS) throw badRequest(`since: the window may span at most ${MESSAGE_COUNT_RETENTION_MINUTES / (24 * 60)} days (counts are kept that long)`);
    const since = new Date(sinceMs).toISOString();
    const until = new Date(untilMs).toISOString();
    const [sinceMinute, untilMinute] = [minuteOf(sinceMs), minuteOf(untilMs) + 1];
    const outcomes = (replay: boolean) =>
      Promise.all(DESTINATION_OUTCOMES.map((outcome) => deliveries.count({ destinationId: destination.id, since, until, outcome: { outcome, replay } }))).then(
        (counts) => Object.fromEntries(DESTINATION_OUTCOMES.map((outcome, i) => [outcome, counts[i]])) as Record<DestinationOutcome, number>,
      );
    const [received, filteredRows, live, replayed, titles, names] = await Promise.all([
      store.messageCounts.received(destination.sourceId, sinceMinute, untilMinute),
      store.messageCounts.filtered(destination.id, sinceMinute, untilMinute),
      outcomes(false),
      outcomes(true),
      filterTitles ? filterTitles(destination.id) : Promise.resolve(new Map<string, string>()),
      transformationNames ? transformationNames(destination.sourceId) : Promise.resolve(new Map<string, string>()),
    ]);
    const { filtered, byFilter, byTransformation } = summarizeFiltered(filteredRows);
    return {
      since,
      until,
      received,
      filtered: { ...filtered, stopped: live.stopped },
      delivered: live.delivered,
      retrying: live.retrying,
      failed: live.failed,
      replayed,
      byFilter: byFilter.map(({ id, dropped }) => ({ id, title: titles.get(id) ?? id, dropped })),
      transformations: {
        changed: byTransformation.reduce((sum, each) => sum + each.changed, 0),
        dropped: filtered.transformation,
        byTransformation: byTransformation.map((each) => ({ id: each.id, name: names.get(each.id) ?? each.id, changed: each.changed, dropped: each.dropped })),
      },
    };
  });
};
