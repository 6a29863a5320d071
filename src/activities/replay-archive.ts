import { ApplicationFailure, Context, log } from '@temporalio/activity';
import { erasableIds, erasedBeforeSend } from '../delivery/erasure';
import { NO_COUNTS, type ArchivedCall, type ReplayCounts, type ReplayPlan, type ReplayStatus } from '../delivery/replay';
import { suppressedBeforeSend, type Suppression } from '../delivery/suppression';
import type { DeliveryInput, DeliveryPolicy, MessageBody } from '../delivery/types';
import { inParallel } from '../in-parallel';
import { firstPace, lagCeilingMs, nextPace, pageSizeAt, restDue, spacingMs, type ReplayPace } from '../delivery/replay-pace';
import type { LiveLag } from './live-lag';
import { destinationRulesReader } from '../messages/destination-rules';
import { deliveryPlanner, type Outgoing } from '../messages/plan-deliveries';
import { bodySealer } from '../messages/seal-bodies';
import type { ReplayDeliveries } from '../ports';
import type { Keyring } from '../privacy/keyring';
import { ARCHIVED_CALL, isSealedBody, openBody, ReplacedKeyError, SealedBodyError } from '../privacy/sealed-body';
import { conditionMatches } from '../rules/fql-match';
import { parseFql } from '../rules/fql';
import type { ArchivedMessage, EnabledDestination, Store } from '../store/types';
import { decideCallPlan } from '../messages/plan-calls';
import { withArchivedOmissions } from '../messages/archived-omissions';
import { sourcePlanReader } from '../plans/plan-reader';

/** Replayed deliveries started (or outcomes read) at once within a page. */
const PAGE_CONCURRENCY = 8;

export interface ReplayPageResult {
  counts: ReplayCounts;
  /** messageIds whose replayed delivery this page started (or found started by an earlier try of it). */
  inFlight: string[];
  /** Cursor of the next page; absent after the last (and meaningless when `rested`). */
  next?: string;
  /** A paced page: the pace it went at, for the next page to start from. */
  pace?: ReplayPace;
  /** The replay rests now instead (delivery/replay-pace.ts): this page read nothing, the cursor stays. */
  rested?: boolean;
}

/** One replayed message's end, as replayOutcomes reports it. */
export interface ReplayOutcome {
  messageId: string;
  outcome: 'delivered' | 'failed';
}

/** Why an archived message is not sent to the destination, or the delivery input it goes with. */
type Verdict = 'unmatched' | 'erased' | 'suppressed' | 'filtered' | 'blocked' | { send: DeliveryInput };

/**
 * The replay's I/O. Each archived message is decided as a live one is today: opened
 * with its user's data key (gone: erased), the replay's trigger, the erasure and suppression
 * records, then the one decision of plan-deliveries.ts against the destination's consent and
 * filters as saved now. A page is read in batches, not per message: its data keys, its users'
 * erasures and suppressions, and the destination's rules once each, so a replay's rate is bound
 * by its deliveries, not by store round trips. A page is safe to run again: each delivery's
 * workflow id is the replay's and the message's, started at most once.
 *
 * The source's tracking plan as it is today decides each message first, as at ingest
 * (plans/plan-decision.ts, once per message): a blocked one is stopped by the decision's `plan`
 * rule and counted `skipped.blocked`, an omitted property is left out. A blocked-only replay
 * (recovery) reads only what the plan blocked at ingest, decides it for every enabled destination
 * of the source, and starts each message's own delivery (ReplayDeliveries.recover), so it reaches
 * each destination once, however many recoveries follow.
 */
export function makeReplayActivities(store: Store, policy: DeliveryPolicy, keyring: Keyring | undefined, deliveries: ReplayDeliveries, archiveRetentionMs: number, pacing: { liveLag: LiveLag; limitMs: number | 'auto' }, clock: () => number = Date.now) {
  // As ingest does: a saved filter this version cannot compile is left out, and said (its id, never a payload).
  const rulesOf = destinationRulesReader(
    store.destinationFilters,
    (message, filterId) => {
      log.warn(message, { filterId });
    },
    store.transformations,
  );
  const seal = keyring && bodySealer(store.dataKeys, keyring);
  // The plan ingest decides by, read the same way (its compiled copy kept per revision).
  const planOf = sourcePlanReader(store.trackingPlans, (message, planId) => {
    log.warn(message, { planId });
  });

  /** Each archived call readable again, or 'erased' once its user's data key is gone: one key read for the page. */
  async function opened(messages: ArchivedMessage[]): Promise<Array<ArchivedCall | 'erased'>> {
    const subjects = messages.flatMap((message) => (isSealedBody(message.call) ? [message.call.subject] : []));
    const keys = subjects.length > 0 ? await store.dataKeys.getMany(subjects) : new Map<string, Buffer>();
    return messages.map(({ messageId, call }) => {
      if (!isSealedBody(call)) return call;
      const key = keys.get(call.subject);
      if (!key) return 'erased';
      try {
        return openBody(key, messageId, call, ARCHIVED_CALL) as ArchivedCall;
      } catch (err) {
        if (!(err instanceof SealedBodyError)) throw err;
        // A user erased by DELETE_ONLY who came back has a new key, which does
        // not open what the destroyed one sealed: erased, as redelivery counts it. A row that names
        // the current key and still does not open was altered: never sent either, and said.
        if (!(err instanceof ReplacedKeyError)) log.warn('archived call skipped as erased: it does not open under its subject\'s key (sealed under a destroyed key, or altered)', { messageId, keyNamed: call.keyCheck !== undefined });
        return 'erased';
      }
    });
  }

  /**
   * The page's verdicts, in its order: its users' erasures and suppressions read once, the source's
   * plan once, then one delivery plan for what is left, to `destinations` (the replay's one, or
   * every enabled destination of the source for a blocked-only replay).
   */
  async function decidePage(replay: ReplayPlan, destinations: EnabledDestination[], messages: ArchivedMessage[], matches: (body: MessageBody) => boolean): Promise<Verdict[]> {
    const calls = await opened(messages);
    // An erased user's trigger cannot be read: counted as matched and skipped.
    const matched = calls.map((call) => call !== 'erased' && matches(call.message));
    const idsOf = calls.map((call, i) => (matched[i] && call !== 'erased' ? erasableIds(call.message) : []));
    const ids = [...new Set(idsOf.flat())];
    const [erasedAt, suppressions] = ids.length > 0 ? await Promise.all([store.erasures.erasedAtOf(ids), store.suppressions.ofEach(ids)]) : [new Map<string, string>(), new Map<string, Suppression[]>()];
    // Today's plan, once per message, on the call as sent (the archive keeps it before any omission).
    const source = matched.some(Boolean) ? await planOf(replay.sourceId) : undefined;
    const verdicts = calls.map((call, i) => (call !== 'erased' && matched[i] && source ? decideCallPlan(call.message, source.plan, source.controls) : undefined));
    const stopped = calls.map((call, i): Verdict | undefined => {
      if (call === 'erased') return 'erased';
      if (!matched[i]) return 'unmatched';
      // The latest erasure of any of the message's ids, as erasures.erasedAt answers for them together.
      if (erasedBeforeSend(call.message, idsOf[i].flatMap((id) => erasedAt.get(id) ?? []).sort().at(-1))) return 'erased';
      // The plan's stop comes before suppression, as in the decision's rules (rules/delivery-decision.ts).
      if (verdicts[i]?.status !== 'blocked' && suppressedBeforeSend(call.message, idsOf[i].flatMap((id) => suppressions.get(id) ?? []))) return 'suppressed';
      return undefined;
    });
    const going = calls.flatMap((call, i): Outgoing[] => {
      if (stopped[i] !== undefined || call === 'erased') return [];
      const planBlocked = verdicts[i]?.status === 'blocked';
      // What the plan omitted at ingest stays omitted, whatever today's plan (or none) says.
      const body = withArchivedOmissions(verdicts[i]?.body ?? call.message, call.plan?.omitted);
      return [{ messageId: messages[i].messageId, type: call.type, userId: typeof body.userId === 'string' ? body.userId : undefined, body, rules: { integrations: call.integrations, suppressed: false, ...(planBlocked && { planBlocked }) } }];
    });
    const inputs = new Map<string, DeliveryInput>();
    if (going.length > 0) {
      // The planner of every live message, for these destinations and the whole page: the plan's verdict, consent, integrations, filters (read once a call).
      const planned = await deliveryPlanner({ listEnabled: async () => destinations }, policy, replay.dryRun ? undefined : seal, { rulesOf })(replay.sourceId, going);
      if (planned.status === 'planned') for (const input of planned.inputs) inputs.set(input.messageId, input);
    }
    // The planner leaves out a message the rules stop for every destination: the plan's stop is counted apart.
    return messages.map(({ messageId }, i) => stopped[i] ?? (inputs.has(messageId) ? { send: inputs.get(messageId)! } : verdicts[i]?.status === 'blocked' ? 'blocked' : 'filtered'));
  }

  /** Waits `ms` (a pace's spacing), heartbeating each second, and ends early when the activity is cancelled. */
  async function rest(ms: number): Promise<void> {
    for (let left = ms; left > 0; left -= 1_000) {
      await Context.current().sleep(Math.min(left, 1_000));
      Context.current().heartbeat();
    }
  }

  return {
    /** One page of the replay's range: each archived message decided, and sent unless it is a dry run. */
    async replayPage({ replay, cursor, size, paced, pace: lastPace }: { replay: ReplayPlan; cursor?: string; size: number; paced?: boolean; pace?: ReplayPace }): Promise<ReplayPageResult> {
      // Live traffic first: a paced page (every page since REPLAY_PACED_PATCH; a dry run sends nothing) holds about PAGE_SECONDS of sends at the pace live lag allows.
      let pace: ReplayPace | undefined;
      if (paced && !replay.dryRun) {
        const now = clock();
        const reading = pacing.liveLag.reading(now);
        const before = lastPace ?? firstPace(reading, now);
        pace = nextPace(before, reading, pacing.limitMs);
        if (pace !== before) {
          // Each judged window said once: a slowed replay at info (live traffic was waiting), the rest at debug.
          const fields = { replayId: replay.id, perSecond: pace.perSecond, liveLagP90Ms: reading.latest?.p90Ms, liveSends: reading.latest?.samples, ceilingMs: lagCeilingMs(reading, pacing.limitMs) };
          if (pace.perSecond < before.perSecond) log.info('replay slowed: live messages waited longer than the ceiling', fields);
          else log.debug('replay pace', fields);
        }
        // The workflow rests (a timer a pause or cancel cuts short); this page reads nothing.
        if (restDue(pace, reading, now, pacing.limitMs)) return { counts: { ...NO_COUNTS }, inFlight: [], rested: true, pace: { ...pace, restedAtMs: now } };
        size = pageSizeAt(pace, size);
      }
      const enabled = await store.destinations.listEnabled(replay.sourceId);
      // A blocked-only replay goes to every enabled destination of the source (none left: it skips each as filtered).
      const destinations = replay.blockedOnly ? enabled : enabled.filter((d) => d.id === replay.destinationId);
      if (!replay.blockedOnly && destinations.length === 0) throw ApplicationFailure.nonRetryable(`destination ${replay.destinationId} is deleted, switched off or has no webhook URL`, 'ReplayDestinationGone');
      const parsed = replay.trigger === undefined ? undefined : parseFql(replay.trigger);
      if (parsed && !parsed.ok) throw ApplicationFailure.nonRetryable(`trigger: ${parsed.error.message}`, 'ReplayTriggerInvalid');
      const matches = (body: MessageBody) => !parsed || conditionMatches(parsed.condition, body);
      // ARCHIVE_RETENTION bounds what a replay reads, whatever is not yet removed (a PostgreSQL day partition).
      const since = new Date(Math.max(Date.parse(replay.since), clock() - archiveRetentionMs)).toISOString();
      const page = await store.archive.page(replay.sourceId, { since, until: replay.until, ...(replay.blockedOnly && { planStatus: 'blocked' as const }) }, size, cursor);
      const counts: ReplayCounts = { ...NO_COUNTS, skipped: { ...NO_COUNTS.skipped } };
      const inFlight: string[] = [];
      const verdicts = await decidePage(replay, destinations, page.messages, matches);
      Context.current().heartbeat();
      for (const verdict of verdicts) {
        if (verdict !== 'unmatched') counts.matched++;
        if (verdict === 'erased' || verdict === 'suppressed' || verdict === 'filtered' || verdict === 'blocked') counts.skipped[verdict]++;
      }
      const sends = verdicts.flatMap((verdict) => (typeof verdict === 'object' ? [verdict.send] : []));
      const start = async (input: DeliveryInput) => {
        const replayed = { ...input, replay: { id: replay.id } };
        // A recovered message whose delivery exists already (an earlier recovery, a resend) is not sent twice.
        if (replay.blockedOnly && !(await deliveries.recover(replayed))) {
          counts.skipped.duplicate++;
          return;
        }
        if (!replay.blockedOnly) await deliveries.start(replayed);
        counts.started++;
        inFlight.push(input.messageId);
        Context.current().heartbeat();
      };
      if (replay.dryRun) {
        // Sends nothing.
      } else if (pace) {
        // One after another, spaced at the pace (the last wait too: the next page follows at once).
        for (const input of sends) {
          const begun = clock();
          await start(input);
          await rest(spacingMs(pace) - (clock() - begun));
        }
      } else await inParallel(sends, PAGE_CONCURRENCY, start);
      return { counts, inFlight, ...(page.next !== undefined && { next: page.next }), ...(pace && { pace }) };
    },

    /** Which of these replayed deliveries have ended, and how (describe: strongly consistent). */
    /** `recoveredFrom`: a blocked-only replay's source, whose deliveries are the messages' own workflows. */
    async replayOutcomes({ replayId, messageIds, recoveredFrom }: { replayId: string; messageIds: string[]; recoveredFrom?: string }): Promise<ReplayOutcome[]> {
      const ended: ReplayOutcome[] = [];
      await inParallel(messageIds, PAGE_CONCURRENCY, async (messageId) => {
        const outcome = await deliveries.outcome(replayId, messageId, recoveredFrom);
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
