import type { Metrics } from '../metrics';
import { blockedEventCall, violationEventCall } from '../plans/forwarding';
import type { ViolationCap } from '../plans/violation-counts';
import type { Store } from '../store/types';
import { ingestCalls, type IngestDependencies } from './ingest-calls';

/**
 * Segment's forwarding: blocked events, unchanged, into `forwardingBlockedEventsTo`,
 * and one `Violation Generated` per violation (capped per source, event and field a minute) into
 * `forwardingViolationsTo`, each through the whole ingest path of that source as if sent there,
 * never forwarded again. A source deleted since it was named is skipped and logged.
 */
export function planForwarder(
  dependencies: () => IngestDependencies,
  sources: Pick<Store['sources'], 'get'>,
  cap: ViolationCap,
  metrics?: Pick<Metrics, 'violationsSuppressed'>,
  warn: (message: string, sourceId: string) => void = () => undefined,
): NonNullable<IngestDependencies['forward']> {
  const into = async (sourceId: string, calls: Parameters<typeof ingestCalls>[1]['calls']) => {
    if (calls.length === 0) return;
    if (!(await sources.get(sourceId))) {
      warn('a tracking plan forwards into a source that no longer exists; nothing forwarded', sourceId);
      return;
    }
    const result = await ingestCalls(dependencies(), { sourceId, calls, receivedAtMs: Date.now(), inBatch: true, forwarded: true });
    if (result.status === 'unavailable') throw new Error(result.reason);
    if (result.status === 'rejected') warn(`forwarded calls were refused: ${result.problem}`, sourceId);
  };
  return async (planned, request, plan, { violationsTo, blockedTo }) => {
    if (blockedTo) await into(blockedTo, planned.filter((call) => call.verdict.status === 'blocked').map((call) => blockedEventCall(call.original, call.integrations)));
    if (!violationsTo || planned.every((call) => call.verdict.violations.length === 0)) return;
    const origin = { sourceId: request.sourceId, sourceName: (await sources.get(request.sourceId))?.name ?? '', plan };
    const calls = planned.flatMap((call) => {
      const eventName = call.original.event ?? call.original.name ?? '';
      return call.verdict.violations.flatMap((violation) => {
        if (cap.allow(request.sourceId, eventName, violation.field, request.receivedAtMs)) return [violationEventCall(call.original, violation, origin, request.batchSentAt)];
        metrics?.violationsSuppressed.inc({ source: request.sourceId });
        return [];
      });
    });
    await into(violationsTo, calls);
  };
}
