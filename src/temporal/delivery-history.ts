import type { AttemptRequest, AttemptResult, DeliveryInput, DeliveryReport } from '../delivery/types';
import type { AttemptRecord, DestinationAttempts } from '../ports';

/**
 * A delivery workflow's history, its payloads already decoded, as the few events that say what
 * was attempted. The Temporal side (temporal-deliveries.ts) makes these from the raw events; the
 * mapping below is pure so it can be tested on tables of histories.
 */
export type HistoryItem =
  | { kind: 'scheduled'; eventId: string; request: AttemptRequest }
  | { kind: 'activity-started'; scheduledEventId: string; at: string }
  | { kind: 'activity-completed'; scheduledEventId: string; at: string; result: AttemptResult }
  | { kind: 'activity-failed'; scheduledEventId: string; at: string; message: string }
  /** A local activity's marker: its sequence number, when it completed, and its result or failure. */
  | { kind: 'local'; seq: number; at: string; result?: AttemptResult; failure?: string }
  | { kind: 'closed'; report?: DeliveryReport };

function recordOf(result: AttemptResult, request: Pick<AttemptRequest, 'webhookIndex' | 'round' | 'mapping'>, url: string | undefined, startedAt: string | undefined): AttemptRecord | undefined {
  // Nothing was sent: a deferred local attempt (made again as an activity), a busy webhook (asked
  // again), a destination switched off, or an index past the destination's last URL.
  if (result.deferred || result.busy || !result.destinationEnabled || !result.outcome) return undefined;
  const { outcome } = result;
  return {
    ...(request.mapping !== undefined && { mapping: request.mapping }),
    webhookIndex: request.webhookIndex,
    ...(url !== undefined && { url }),
    round: request.round,
    ...(startedAt !== undefined && { startedAt }),
    ...(result.durationMs !== undefined && { durationMs: result.durationMs }),
    ...(outcome.status !== undefined && { httpStatus: outcome.status }),
    ...(outcome.kind !== 'success' && { error: outcome.reason }),
    outcome: outcome.kind,
    ...(result.logs && { logs: result.logs }),
    ...(result.errorMessage !== undefined && { errorMessage: result.errorMessage }),
    ...(result.sealedLogs && { sealedLogs: result.sealedLogs }),
  };
}

const minus = (at: string, ms: number | undefined) => (ms === undefined ? at : new Date(Date.parse(at) - ms).toISOString());

/**
 * Per destination of the input, in its order, each attempt in the order history recorded it. A
 * local first attempt records no input: the workflow schedules one per destination, in the order of
 * `destinationIds`, before anything else, so local activity sequence number n is destination n-1's
 * first URL in round 1. An actions destination schedules one per matched mapping instead,
 * in the order of its `mappings` (workflows/deliver-message.ts starts every lane before awaiting).
 */
export function deliveryAttempts(input: DeliveryInput, items: HistoryItem[]): DestinationAttempts[] {
  const byDestination = new Map<string, DestinationAttempts>(input.destinationIds.map((destinationId) => [destinationId, { destinationId, attempts: [] }]));
  const labelOf = (destinationId: string, index: number) => input.webhookLabels?.[destinationId]?.[index];
  const firstLocals = input.destinationIds.flatMap((destinationId): { destinationId: string; mapping?: string }[] => input.mappings?.[destinationId]?.map((mapping) => ({ destinationId, mapping })) ?? [{ destinationId }]);
  const scheduled = new Map<string, { request: AttemptRequest; startedAt?: string }>();
  for (const item of items) {
    switch (item.kind) {
      case 'scheduled':
        scheduled.set(item.eventId, { request: item.request });
        break;
      case 'activity-started': {
        const entry = scheduled.get(item.scheduledEventId);
        if (entry) entry.startedAt = item.at;
        break;
      }
      case 'activity-completed':
      case 'activity-failed': {
        const entry = scheduled.get(item.scheduledEventId);
        const destination = entry && byDestination.get(entry.request.destinationId);
        if (!entry || !destination) break;
        const { request } = entry;
        const url = request.mapping === undefined ? labelOf(request.destinationId, request.webhookIndex) : undefined;
        const record =
          item.kind === 'activity-completed'
            ? recordOf(item.result, request, url, entry.startedAt ?? minus(item.at, item.result.durationMs))
            : { ...(request.mapping !== undefined && { mapping: request.mapping }), webhookIndex: request.webhookIndex, ...(url !== undefined && { url }), round: request.round, ...(entry.startedAt && { startedAt: entry.startedAt }), error: `attempt lost: ${item.message}`, outcome: 'retry' as const };
        if (record) destination.attempts.push(record);
        break;
      }
      case 'local': {
        const lane = firstLocals[item.seq - 1];
        const destination = lane === undefined ? undefined : byDestination.get(lane.destinationId);
        if (!destination) break;
        const request = { ...(lane.mapping !== undefined && { mapping: lane.mapping }), webhookIndex: 0, round: 1 };
        const url = lane.mapping === undefined ? labelOf(destination.destinationId, 0) : undefined;
        const record = item.result
          ? recordOf(item.result, request, url, minus(item.at, item.result.durationMs))
          : { ...request, ...(url !== undefined && { url }), startedAt: item.at, error: `attempt lost: ${item.failure ?? 'local activity failed'}`, outcome: 'retry' as const };
        if (record) destination.attempts.push(record);
        break;
      }
      case 'closed':
        for (const report of item.report?.destinations ?? []) {
          const destination = byDestination.get(report.destinationId);
          if (!destination) continue;
          destination.status = report.status;
          if (report.reason !== undefined) destination.reason = report.reason;
        }
        break;
    }
  }
  return [...byDestination.values()];
}
