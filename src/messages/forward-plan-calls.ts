import { messageBody } from '../delivery/payload';
import type { Metrics } from '../metrics';
import { blockedEventCall, violationEventCall, type ViolationOrigin } from '../plans/forwarding';
import type { ViolationCap } from '../plans/violation-counts';
import type { Keyring } from '../privacy/keyring';
import type { Store } from '../store/types';
import { forwardedPages } from './forwarded-pages';
import { forwardedCalls, type CallFrom, type ForwardingJob } from './forwarding-job';
import type { IngestDependencies } from './ingest-calls';

/** Starts a forwarding job (a workflow per page, messages/forwarding-job.ts); resolves once Temporal holds it. */
export type StartForwarding = (job: ForwardingJob) => Promise<void>;

/**
 * Segment's forwarding: blocked events, unchanged, into `forwardingBlockedEventsTo`, and one
 * `Violation Generated` per violation into `forwardingViolationsTo`, each through the whole ingest
 * path of that source as if sent there, never forwarded again. The violations are the verdict's,
 * already bounded per message (plans/violation-bounds.ts); the cap then bounds them per (source,
 * rule, violation type) and per source a minute. The forwarded calls keep the request's bounds: a
 * call over 32 KB is left out alone (and said), the rest go in pages no larger than one request may
 * be, each page a durable job: the origin's answer waits for Temporal to hold the job, never for
 * the target's ingestion. A source deleted since it was named is skipped and logged.
 */
export function planForwarder(
  startJob: StartForwarding,
  store: Pick<Store, 'sources' | 'dataKeys'>,
  cap: ViolationCap,
  keyring: Keyring | undefined,
  metrics?: Pick<Metrics, 'violationsSuppressed'>,
  warn: (message: string, sourceId: string) => void = () => undefined,
): NonNullable<IngestDependencies['forward']> {
  const seal = keyring && { keyring, dataKeys: store.dataKeys };
  const into = async (originSourceId: string, targetSourceId: string, calls: CallFrom[]) => {
    if (calls.length === 0) return;
    if (!(await store.sources.get(targetSourceId))) {
      warn('a tracking plan forwards into a source that no longer exists; nothing forwarded', targetSourceId);
      return;
    }
    const { pages, refused } = forwardedPages(calls, (from) => from.call);
    for (const problem of refused) warn(`a forwarded call was left out: ${problem}`, targetSourceId);
    for (const page of pages) await startJob({ originSourceId, targetSourceId, calls: await forwardedCalls(page, seal) });
  };
  return async (planned, request, plan, { violationsTo, blockedTo }) => {
    if (blockedTo) {
      const blocked = planned.filter((call) => call.verdict.status === 'blocked');
      await into(request.sourceId, blockedTo, blocked.map((call) => ({ call: blockedEventCall(call.original, call.integrations), original: messageBody(call.original) })));
    }
    if (!violationsTo || planned.every((call) => call.verdict.violations.length === 0)) return;
    const origin: ViolationOrigin = { sourceId: request.sourceId, sourceName: (await store.sources.get(request.sourceId))?.name ?? '', plan };
    const calls = planned.flatMap((call, i): CallFrom[] => {
      const { original } = call;
      // The rule a violation is of: a track's event, else its call type (identify, group, page, screen).
      const rule = original.type === 'track' ? (original.event ?? '') : original.type;
      // The call's own sentAt (acceptance keeps only the timestamp it corrected), else the batch's.
      const ownSentAt = request.calls[i]?.fields.sentAt;
      const sentAt = typeof ownSentAt === 'string' ? ownSentAt : request.batchSentAt;
      return call.verdict.violations.flatMap((violation) => {
        if (cap.allow(request.sourceId, rule, violation.violationType, request.receivedAtMs)) return [{ call: violationEventCall(original, violation, origin, sentAt), original: messageBody(original) }];
        metrics?.violationsSuppressed.inc({ source: request.sourceId });
        return [];
      });
    });
    await into(request.sourceId, violationsTo, calls);
  };
}
