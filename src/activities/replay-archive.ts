import { ApplicationFailure, Context } from '@temporalio/activity';
import { erasableIds, erasedBeforeSend } from '../delivery/erasure';
import { NO_COUNTS, type ArchivedCall, type ReplayCounts, type ReplayPlan, type ReplayStatus } from '../delivery/replay';
import { suppressedBeforeSend } from '../delivery/suppression';
import type { DeliveryPolicy, MessageBody } from '../delivery/types';
import { inParallel } from '../in-parallel';
import { destinationRulesReader } from '../messages/destination-rules';
import { deliveryPlanner, type Outgoing } from '../messages/plan-deliveries';
import { bodySealer } from '../messages/seal-bodies';
import type { ReplayDeliveries } from '../ports';
import type { Keyring } from '../privacy/keyring';
import { ARCHIVED_CALL, isSealedBody, openBody } from '../privacy/sealed-body';
import { conditionMatches } from '../rules/fql-match';
import { parseFql } from '../rules/fql';
import type { ArchivedMessage, EnabledDestination, Store } from '../store/types';

/** Messages decided (key, erasure and suppression reads, a start) at once within a page. */
const PAGE_CONCURRENCY = 8;

export interface ReplayPageResult {
  counts: ReplayCounts;
  /** messageIds whose replayed delivery this page started (or found started by an earlier try of it). */
  inFlight: string[];
  /** Cursor of the next page; absent after the last. */
  next?: string;
}

/** One replayed message's end, as replayOutcomes reports it. */
export interface ReplayOutcome {
  messageId: string;
  outcome: 'delivered' | 'failed';
}

/** Why an archived message is not sent to the destination, or that it goes. */
type Verdict = 'unmatched' | 'erased' | 'suppressed' | 'filtered' | 'send';

/**
 * The replay's I/O (issue 31). Each archived message is decided as a live one is today: opened
 * with its user's data key (gone: erased), the replay's trigger, the erasure and suppression
 * records, then the one decision of plan-deliveries.ts against the destination's consent and
 * filters as saved now. A page is safe to run again: each delivery's workflow id is the replay's
 * and the message's, started at most once.
 */
export function makeReplayActivities(store: Store, policy: DeliveryPolicy, keyring: Keyring | undefined, deliveries: ReplayDeliveries, archiveRetentionMs: number, clock: () => number = Date.now) {
  const rulesOf = destinationRulesReader(store.destinationFilters, () => undefined);
  const seal = keyring && bodySealer(store.dataKeys, keyring);

  /** The archived call readable again, or 'erased' once its user's data key is gone. */
  async function opened(message: ArchivedMessage): Promise<ArchivedCall | 'erased'> {
    if (!isSealedBody(message.call)) return message.call;
    const key = await store.dataKeys.get(message.call.subject);
    if (!key) return 'erased';
    return openBody(key, message.messageId, message.call, ARCHIVED_CALL) as ArchivedCall;
  }

  async function decide(replay: ReplayPlan, destination: EnabledDestination, message: ArchivedMessage, matches: (body: MessageBody) => boolean): Promise<Verdict> {
    const call = await opened(message);
    // An erased user's trigger cannot be read: counted as matched and skipped.
    if (call === 'erased') return 'erased';
    if (!matches(call.message)) return 'unmatched';
    const ids = erasableIds(call.message);
    if (ids.length > 0 && erasedBeforeSend(call.message, await store.erasures.erasedAt(ids))) return 'erased';
    if (ids.length > 0 && suppressedBeforeSend(call.message, await store.suppressions.of(ids))) return 'suppressed';
    // The planner of every live message, for this one destination: consent, integrations, filters.
    const plan = deliveryPlanner({ listEnabled: async () => [destination] }, policy, replay.dryRun ? undefined : seal, { rulesOf })(replay.sourceId, [
      { messageId: message.messageId, type: call.type, userId: typeof call.message.userId === 'string' ? call.message.userId : undefined, body: call.message, rules: { integrations: call.integrations, suppressed: false } } satisfies Outgoing,
    ]);
    const planned = await plan;
    // The planner answers `planned` with no input when the rules stop the message for the destination.
    if (planned.status === 'no_destinations' || planned.inputs.length === 0) return 'filtered';
    if (!replay.dryRun) await deliveries.start({ ...planned.inputs[0], replay: { id: replay.id } });
    return 'send';
  }

  return {
    /** One page of the replay's range: each archived message decided, and sent unless it is a dry run. */
    async replayPage({ replay, cursor, size }: { replay: ReplayPlan; cursor?: string; size: number }): Promise<ReplayPageResult> {
      const destination = (await store.destinations.listEnabled(replay.sourceId)).find((d) => d.id === replay.destinationId);
      if (!destination) throw ApplicationFailure.nonRetryable(`destination ${replay.destinationId} is deleted, switched off or has no webhook URL`, 'ReplayDestinationGone');
      const parsed = replay.trigger === undefined ? undefined : parseFql(replay.trigger);
      if (parsed && !parsed.ok) throw ApplicationFailure.nonRetryable(`trigger: ${parsed.error.message}`, 'ReplayTriggerInvalid');
      const matches = (body: MessageBody) => !parsed || conditionMatches(parsed.condition, body);
      // ARCHIVE_RETENTION bounds what a replay reads, whatever is not yet removed (a PostgreSQL day partition).
      const since = new Date(Math.max(Date.parse(replay.since), clock() - archiveRetentionMs)).toISOString();
      const page = await store.archive.page(replay.sourceId, { since, until: replay.until }, size, cursor);
      const counts: ReplayCounts = { ...NO_COUNTS, skipped: { ...NO_COUNTS.skipped } };
      const inFlight: string[] = [];
      await inParallel(page.messages, PAGE_CONCURRENCY, async (message) => {
        const verdict = await decide(replay, destination, message, matches);
        if (verdict !== 'unmatched') counts.matched++;
        if (verdict === 'erased' || verdict === 'suppressed' || verdict === 'filtered') counts.skipped[verdict]++;
        if (verdict === 'send' && !replay.dryRun) {
          counts.started++;
          inFlight.push(message.messageId);
        }
        Context.current().heartbeat();
      });
      return { counts, inFlight, ...(page.next !== undefined && { next: page.next }) };
    },

    /** Which of these replayed deliveries have ended, and how (describe: strongly consistent). */
    async replayOutcomes({ replayId, messageIds }: { replayId: string; messageIds: string[] }): Promise<ReplayOutcome[]> {
      const ended: ReplayOutcome[] = [];
      await inParallel(messageIds, PAGE_CONCURRENCY, async (messageId) => {
        const outcome = await deliveries.outcome(replayId, messageId);
        // Gone: deleted by a regulation (an erased user's workflows are forgotten), so not delivered.
        if (outcome !== 'running') ended.push({ messageId, outcome: outcome === 'delivered' ? 'delivered' : 'failed' });
        Context.current().heartbeat();
      });
      return ended;
    },

    async saveReplayCounts({ id, counts }: { id: string; counts: ReplayCounts }): Promise<void> {
      await store.replays.saveCounts(id, counts);
    },

    async setReplayStatus({ id, status }: { id: string; status: ReplayStatus }): Promise<void> {
      await store.replays.setStatus(id, status, new Date(clock()).toISOString());
    },
  };
}
