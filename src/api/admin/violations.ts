import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { minuteOf, MINUTE_MS } from '../../delivery/webhook-health';
import { VIOLATION_RETENTION_MINUTES } from '../../plans/violation-recorder';
import { VIOLATION_TYPES } from '../../plans/violations';
import type { Store } from '../../store/types';
import { MAX_VIOLATION_KINDS, MAX_VIOLATION_ROWS } from '../../store/tracking-plans';
import { badRequest, notFound } from '../errors';
import { errorReplies, IdParams } from './schemas';

const ViolationsQuery = Type.Object({
  since: Type.Optional(Type.String({ format: 'date-time', description: 'Start of the window (default: 24 hours before `until`); counts are per minute.' })),
  until: Type.Optional(Type.String({ format: 'date-time', description: 'End of the window (default: now), exclusive; the minute it falls in is included.' })),
  eventName: Type.Optional(Type.String({ maxLength: 200, description: 'Only this event (track) or page/screen name.' })),
  // Query strings arrive as text (the app's Ajv does not coerce types), so the limit is checked as digits.
  limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,4}$', description: `The most kinds answered, most frequent first: 1 to ${MAX_VIOLATION_KINDS} (default ${MAX_VIOLATION_KINDS}); counted over the window's newest ${MAX_VIOLATION_ROWS} per-minute rows.` })),
});

const ViolationView = Type.Object({
  eventType: Type.String({ description: 'The call type: track, identify, group, page, screen.' }),
  eventName: Type.String(),
  field: Type.String({ description: 'Dotted from the message root: `properties.price`.' }),
  violationType: Type.String({ description: VIOLATION_TYPES.join(', ') }),
  description: Type.String({ description: 'Names and rules, never a value.' }),
  count: Type.Integer({ minimum: 0 }),
  firstSeenAt: Type.String({ format: 'date-time' }),
  lastSeenAt: Type.String({ format: 'date-time' }),
  lastMessageId: Type.String(),
});

/** A source's violations in a window, one record per (event, field, violation type), most frequent first. */
export const violationRoutes: FastifyPluginAsyncTypebox<{ store: Store; clock?: () => number }> = async (app, { store, clock = Date.now }) => {
  app.get('/sources/:id/violations', { schema: { params: IdParams, querystring: ViolationsQuery, response: { 200: Type.Object({ violations: Type.Array(ViolationView) }), ...errorReplies } } }, async (request) => {
    if (!(await store.sources.get(request.params.id))) throw notFound(`source ${request.params.id}`);
    const untilMs = request.query.until !== undefined ? Date.parse(request.query.until) : clock();
    const sinceMs = request.query.since !== undefined ? Date.parse(request.query.since) : untilMs - 24 * 60 * MINUTE_MS;
    if (sinceMs >= untilMs) throw badRequest('until: must be later than since');
    if (untilMs - sinceMs > VIOLATION_RETENTION_MINUTES * MINUTE_MS) throw badRequest(`since: the window may span at most ${VIOLATION_RETENTION_MINUTES / (24 * 60)} days (violations are kept that long)`);
    const limit = request.query.limit === undefined ? MAX_VIOLATION_KINDS : Number(request.query.limit);
    if (limit < 1 || limit > MAX_VIOLATION_KINDS) throw badRequest(`limit: must be from 1 to ${MAX_VIOLATION_KINDS}`);
    return { violations: await store.violations.list(request.params.id, minuteOf(sinceMs), minuteOf(untilMs) + 1, request.query.eventName, limit) };
  });
};
