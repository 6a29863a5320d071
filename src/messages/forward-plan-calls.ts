import type { Metrics } from '../metrics';
import { blockedEventCall, violationEventCall, type ViolationOrigin } from '../plans/forwarding';
import type { ViolationCap } from '../plans/violation-counts';
import type { Store } from '../store/types';
import type { Call } from './call';
import { forwardedPages } from './forwarded-pages';
import { ingestCalls, type IngestDependencies } from './ingest-calls';

/**
 * Segment's forwarding: blocked events, unchanged, into `forwardingBlockedEventsTo`, and one
 * `Violation Generated` per violation into `forwardingViolationsTo`, each through the whole ingest
 * path of that source as if sent there, never forwarded again. The violations are the verdict's,
 * already bounded per message (plans/violation-bounds.ts); the cap then bounds them per (source,
 * rule, violation type) and per source a minute. The forwarded calls keep the request's bounds: a
 * call over 32 KB is left out alone (and said), the rest go in pages no larger than one request may
 * be. A source deleted since it was named is skipped and logged.
 */
export function planForwarder(
  dependencies: () => IngestDependencies,
  sources: Pick<Store['sources'], 'get'>,
  cap: ViolationCap,
  metrics?: Pick<Metrics, 'violationsSuppressed'>,
  warn: (message: string, sourceId: string) => void = () => undefined,
): NonNullable<IngestDependencies['forward']> {
  const into = async (sourceId: string, calls: Call[]) => {
    if (calls.length === 0) return;
    if (!(await sources.get(sourceId))) {
      warn('a tracking plan forwards into a source that no longer exists; nothing forwarded', sourceId);
      return;
    }
    const { pages, refused } = forwardedPages(calls);
    for (const problem of refused) warn(`a forwarded call was left out: ${problem}`, sourceId);
    for (const page of pages) {
      const result = await ingestCalls(dependencies(), { sourceId, calls: page, receivedAtMs: Date.now(), inBatch: true, forwarded: true });
      if (result.status === 'unavailable') throw new Error(result.reason);
      if (result.status === 'rejected') warn(`forwarded calls were refused: ${result.problem}`, sourceId);
    }
  };
  return async (planned, request, plan, { violationsTo, blockedTo }) => {
    if (blockedTo) await into(blockedTo, planned.filter((call) => call.verdict.status === 'blocked').map((call) => blockedEventCall(call.original, call.integrations)));
    if (!violationsTo || planned.every((call) => call.verdict.violations.length === 0)) return;
    const origin: ViolationOrigin = { sourceId: request.sourceId, sourceName: (await sources.get(request.sourceId))?.name ?? '', plan };
    const calls = planned.flatMap((call, i) => {
      const { original } = call;
      // The rule a violation is of: a track's event, else its call type (identify, group, page, screen).
      const rule = original.type === 'track' ? (original.event ?? '') : original.type;
      // The call's own sentAt (acceptance keeps only the timestamp it corrected), else the batch's.
      const ownSentAt = request.calls[i]?.fields.sentAt;
      const sentAt = typeof ownSentAt === 'string' ? ownSentAt : request.batchSentAt;
      return call.verdict.violations.flatMap((violation) => {
        if (cap.allow(request.sourceId, rule, violation.violationType, request.receivedAtMs)) return [violationEventCall(original, violation, origin, sentAt)];
        metrics?.violationsSuppressed.inc({ source: request.sourceId });
        return [];
      });
    });
    await into(violationsTo, calls);
  };
}
