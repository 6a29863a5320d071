import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { minuteOf, MINUTE_MS } from '../../delivery/webhook-health';
import { VIOLATION_RETENTION_MINUTES } from '../../plans/violation-recorder';
import { VIOLATION_TYPES } from '../../plans/violations';
import type { Store } from '../../store/types';
import { actorOf } from '../access/audit-trail';
import { MAX_VIOLATION_KINDS, MAX_VIOLATION_ROWS } from '../../store/tracking-plans';
import { ApiError, badRequest, notFound } from '../errors';
import { errorReplies, IdParams } from './schemas';

const ViolationsQuery = Type.Object({
  since: Type.Optional(Type.String({ format: 'date-time', description: 'Start of the window (default: 24 hours before `until`); counts are per minute.' })),
  until: Type.Optional(Type.String({ format: 'date-time', description: 'End of the window (default: now), exclusive; the minute it falls in is included.' })),
  eventName: Type.Optional(
    Type.String({ maxLength: 200, description: 'Only this event (track) or page/screen name. Needs payloads:read besides read: an event name is user data, and its count says whether a sender sent it.' }),
  ),
  // Query strings arrive as text (the app's Ajv does not coerce types), so the limit is checked as digits.
  limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,4}$', description: `The most kinds answered, most frequent first: 1 to ${MAX_VIOLATION_KINDS} (default ${MAX_VIOLATION_KINDS}); counted over the window's newest ${MAX_VIOLATION_ROWS} per-minute rows.` })),
});

const ViolationView = Type.Object({
  eventType: Type.String({ description: 'The call type: track, identify, group, page, screen.' }),
  eventName: Type.Optional(Type.String({ description: 'Absent to a token without payloads:read: event names are user data (docs/privacy.md "What counts as user data").' })),
  field: Type.Optional(Type.String({ description: 'Dotted from the message root: `properties.price`. Absent to a token without payloads:read: property names are user data.' })),
  violationType: Type.String({ description: VIOLATION_TYPES.join(', ') }),
  description: Type.Optional(Type.String({ description: 'Names and rules, never a value. Absent to a token without payloads:read: it quotes names.' })),
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
    const payloadsRead = actorOf(request).scopes.includes('payloads:read');
    if (request.query.eventName !== undefined && !payloadsRead) throw new ApiError(403, 'forbidden', 'eventName: filtering violations by event name needs the scope payloads:read besides read (an event name is user data)');
    const limit = request.query.limit === undefined ? MAX_VIOLATION_KINDS : Number(request.query.limit);
    if (limit < 1 || limit > MAX_VIOLATION_KINDS) throw badRequest(`limit: must be from 1 to ${MAX_VIOLATION_KINDS}`);
    const violations = await store.violations.list(request.params.id, minuteOf(sinceMs), minuteOf(untilMs) + 1, request.query.eventName, limit);
    // Names are user data (docs/privacy.md, the glossary): the event name, the field and the
    // description quoting them only with payloads:read; without, what happened is left (type, counts, times, messageId).
    return { violations: payloadsRead ? violations : violations.map(({ eventName: _e, field: _f, description: _d, ...counts }) => counts) };
  });
};
