import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  defineSignal,
  setHandler,
  patched,
  proxyActivities,
  proxySinks,
  proxyLocalActivities,
  sleep,
  TimeoutFailure,
  upsertSearchAttributes,
  workflowInfo,
  log,
  type Sinks,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { canRetryAt, nextBackoff } from '../delivery/backoff';
import { holdExceededReason, holdWaitMs } from '../delivery/flow-control';
import { MAX_WEBHOOKS } from '../delivery/limits';
import { busyWait } from '../delivery/retry-window';
import { slowLaneAttemptTimeoutMs, slowLaneTaskQueue } from '../delivery/slow-lane';
import { attemptSummary } from '../delivery/summary';
import { laneKey, mappingAttemptSummary, mappingsReport, whereInLane, type Lane } from '../delivery/mapping-lanes';
import type { AttemptOutcome, AttemptRequest, AttemptResult, DeliveryInput, DeliveryReport, DestinationReport, DestinationStatus, HoldReason, MessageBody, Pressure, SealedBody } from '../delivery/types';
import { outcomeEntries } from '../delivery/destination-outcomes';
import { OUTCOMES, STATUS, type DeliveryStatus } from './search-attributes';
import { DESTINATION_RESUMED, FLOW_CHANGED } from './signals';
import { errorText, laneTransition, statusOfReason, type LaneIncident, type OperationalEvent } from '../delivery/operational-events';

/** Time Temporal gives one attempt beyond the webhook's own deadline, to notice a lost worker. */
const ACTIVITY_GRACE_MS = 5_000;

/**
 * Patches: workflows that started before one of these rules replay the commands they
 * ran with; each rule applies from the point a workflow first reaches it on new code, and only
 * then writes its marker (both are rare: no marker in an ordinary delivery's history).
 * - a busy webhook (the worker's per-webhook cap) waits its turn on the same URL;
 * - a first attempt lost with its worker keeps the round's other URLs.
 * - a busy webhook's next attempt waits its turn in the slow lane, not asking again.
 * - a URL whose attempt went to the slow lane and failed there starts its next round there:
 *   a hanging receiver's backlog then skips the busy answer through the delivery queue each
 *   round (one activity task and one workflow task less per round).
 * - a throttled or backpressured hold ends early when its destination's flow control changes
 *   (a new rate limit, a cleared backpressure), as a paused one does on resume;
 * - so does the wait between two rounds when an answer of the round paused its URL.
 * The hard retry window is the policy's `hardWindow` instead, since it applies to every delivery.
 * - with several destinations, each one's own outcome is upserted in SwitchyardOutcomes
 *   when it finishes, so the overview counts it per destination. A single destination's outcome is
 *   the run's (SwitchyardStatus and how the run ended): its history stays as it was, no upsert.
 */
const BUSY_WAITS_PATCH = 'busy-webhook-waits-its-turn';
const LOST_ATTEMPT_PATCH = 'lost-attempt-keeps-failover';
const SLOW_LANE_PATCH = 'busy-webhook-waits-in-slow-lane';
const SLOW_LANE_FIRST_PATCH = 'failing-slow-lane-webhook-starts-there';
const WAKE_HOLDS_PATCH = 'flow-change-wakes-every-hold';
const CLEARED_PRESSURE_PATCH = 'cleared-backpressure-ends-round-wait';
const DESTINATION_OUTCOMES_PATCH = 'destination-outcomes-in-visibility';
/**
 * A lane's 4th failed attempt, its success after that, and its giving up raise an
 * operational event (an activity: commands older histories do not have). Asked only on those
 * paths, so an ordinary delivery's history carries no marker.
 */
const OPERATIONAL_EVENTS_PATCH = 'operational-events';

/** Raising an operational event starts one workflow on its lane: quick, retried for a few minutes, never failing the delivery. */
const { raiseOperationalEvent } = proxyActivities<Activities>({ startToCloseTimeout: '30s', retry: { initialInterval: '1s', maximumInterval: '1m', maximumAttempts: 10 } });

/**
 * An input whose bodies are in the clear carries its trace context beside them, and each
 * attempt gets it (a sealed input's rides inside its sealed bodies: nothing new to pass). Asked
 * only when the input has one, so no delivery without tracing writes its marker. No OpenTelemetry
 * code runs in the workflow: the attempt activity makes the spans.
 */
const TRACE_CONTEXT_PATCH = 'open-trace-context-in-attempts';

/**
 * `heldTooLong`: the destination's holds used up policy.maxHoldMs; its delivery fails with this reason.
 * `inSlowLane`: the attempt that answered was made in the slow lane.
 */
type Attempted = AttemptResult & { lost?: boolean; heldTooLong?: string; inSlowLane?: boolean };

/** A delivery's first local attempt, scheduled before the rules see it, and the resume signals counted when it was. */
interface FirstLocal {
  local: Promise<AttemptResult>;
  resumesAtAsk: number;
}

/** A destination's flow control within one delivery: what it was held for, and the hold under way. */
interface HoldState {
  heldMs: number;
  consecutive: number;
  reservedSlotMs?: number;
  last?: { reason: HoldReason; ms: number };
}

/**
 * How a delivery tells its worker it ended, for the worker's metrics: a Temporal sink runs in the
 * worker outside the sandbox, is not written to history (no effect on replay or determinism) and
 * is not called again when the workflow is replayed.
 */
export interface DeliverySinks extends Sinks {
  /** `destinationIds` (the `destination` label), in the order of `statuses`. */
  deliveries: { ended(statuses: DestinationStatus[], destinationIds: string[]): void };
}
const { deliveries: deliveriesSink } = proxySinks<DeliverySinks>();

/** The one body an attempt carries: sealed when the input has it so, else in the clear. */
const bodyOf = (from: { message?: MessageBody; sealedMessage?: SealedBody }) => (from.sealedMessage ? { sealedMessage: from.sealedMessage } : { message: from.message });

/**
 * One message, every enabled destination of its source, in parallel. Per destination: its webhook
 * URLs in configured order, one signed POST each, stopping at the first success (seed rule 1). A
 * round with no success waits (backoff with jitter, Retry-After honoured) and starts again until the
 * retry window, counted from the workflow's start, runs out.
 */
export async function deliverMessage(input: DeliveryInput): Promise<DeliveryReport> {
  const { policy } = input;
  const windowEnd = Date.now() + policy.retryWindowMs;
  const windowIsHard = policy.hardWindow === true;
  // Held time (paused, throttled, backpressured) does not count against the retry window,
  // so each destination's window ends that much later. Without flow control nothing is ever held.
  const flowControl = policy.maxHoldMs !== undefined;
  const holds = new Map<string, HoldState>(input.destinationIds.map((id) => [id, { heldMs: 0, consecutive: 0 }]));
  // Each mapping of an actions destination is a lane of its own (its own holds and window
  // end); a `webhooks` destination's lane is the destination, keyed by its id as before.
  const holdOf = (lane: Lane) => {
    const key = laneKey(lane);
    if (lane.mapping !== undefined && !holds.has(key)) holds.set(key, { heldMs: 0, consecutive: 0 });
    return holds.get(key) ?? { heldMs: 0, consecutive: 0 };
  };
  const deadlineOf = (lane: Lane) => windowEnd + holdOf(lane).heldMs;
  // A resumed destination's held deliveries are told at once (admin API), and so are those of a
  // destination whose rate limit changed or whose URL's backpressure was cleared; a
  // signal adds no command.
  const resumes = new Map<string, number>();
  const wake = (destinationId: string) => void resumes.set(destinationId, (resumes.get(destinationId) ?? 0) + 1);
  if (flowControl) {
    setHandler(defineSignal<[string]>(DESTINATION_RESUMED), wake);
    setHandler(defineSignal<[string]>(FLOW_CHANGED), wake);
  }
  // Per destination and URL index: the backpressure pause this delivery has waited out on its own
  // clock, passed back so the store's clock cannot hold it a second time.
  const waitedOutPressure = new Map<string, number>();
  const pressureKey = (lane: Lane, webhookIndex: number) => `${webhookIndex} ${laneKey(lane)}`;
  // Built per attempt: under the hard window its schedule-to-close is what is left of the window,
  // so an attempt whose worker is away past the window's end never starts late (Temporal times it
  // out at the deadline, queued or running).
  // `summary` is user metadata: the Web UI's timeline names each attempt's URL without opening its
  // input. It is not part of the command's identity, so histories recorded without it still replay.
  const attemptOptions = (request: AttemptRequest) => ({
    summary:
      request.mapping === undefined
        ? attemptSummary(request.webhookIndex, request.round, request.destinationId, input.webhookLabels?.[request.destinationId]?.[request.webhookIndex])
        : mappingAttemptSummary(request.mapping, request.round, request.destinationId),
    startToCloseTimeout: policy.timeoutMs + ACTIVITY_GRACE_MS,
    ...(windowIsHard && { scheduleToCloseTimeout: Math.max(1, deadlineOf({ destinationId: request.destinationId, mapping: request.mapping }) - Date.now()) }),
    // HTTP outcomes come back as values and the loop below owns the retry schedule; Temporal only
    // retries an attempt lost with its worker, and that too is just a retryable outcome here.
    retry: { maximumAttempts: 1 },
  });
  // The common case, the first URL accepting the first try, runs as a local activity inside this
  // workflow task: no activity task through the server and no second workflow task, about half
  // the server's writes per message (docs/performance.md). Its result is recorded in history as a
  // marker (a plain AttemptResult, no secrets, like an activity result). Every later attempt is a
  // regular activity, each visible on its own in history.
  const attemptWebhookLocally = (request: AttemptRequest) => proxyLocalActivities<Activities>(attemptOptions(request)).attemptWebhook(request);
  const attemptWebhook = (request: AttemptRequest) => proxyActivities<Activities>(attemptOptions(request)).attemptWebhook(request);
  // Its destination is its Temporal fairness key: one destination's backlog in the lane does not
  // hold up another destination's turn (needs fairness on the server: docs/reliability.md). Its
  // priority stays the workflow's: a replayed delivery's attempt waits behind live ones there too.
  const attemptWebhookInSlowLane = (request: AttemptRequest) =>
    proxyActivities<Activities>({
      ...attemptOptions(request),
      taskQueue: slowLaneTaskQueue(workflowInfo().taskQueue),
      startToCloseTimeout: slowLaneAttemptTimeoutMs(policy.timeoutMs, ACTIVITY_GRACE_MS),
      priority: { fairnessKey: request.destinationId, ...(workflowInfo().priority?.priorityKey !== undefined && { priorityKey: workflowInfo().priority?.priorityKey }) },
    }).attemptWebhook(request);

  const setStatus = (status: DeliveryStatus) => upsertSearchAttributes([{ key: STATUS, value: status }]);

  // A function destination's version, pinned by the first attempt's answer (which read what was
  // deployed then): every later attempt of this delivery asks for that version. An activity's input
  // and result are not part of a command's identity: no patch needed, and no other destination has one.
  const functionVersions = new Map<string, number>();
  const pinned = <R extends AttemptResult>(destinationId: string, result: R): R => {
    if (result.functionVersion !== undefined && !functionVersions.has(destinationId)) functionVersions.set(destinationId, result.functionVersion);
    return result;
  };

  // Per lane, its failed attempts and whether `failing` went out (delivery/operational-events.ts).
  const incidents = new Map<string, { incident: LaneIncident; last?: { index: number; reason: string; at: string } }>();
  const incidentOf = (lane: Lane) => {
    const key = laneKey(lane);
    if (!incidents.has(key)) incidents.set(key, { incident: { failedAttempts: 0, failingSent: false } });
    return incidents.get(key)!;
  };
  /** One attempt's answer (or the lane's end) for the lane's incident; raises the event its transition names, if any. */
  async function operationalTransition(lane: Lane, attempt: 'failed' | 'succeeded' | 'exhausted', answered?: { index: number; reason?: string }): Promise<void> {
    const state = incidentOf(lane);
    if (answered && attempt === 'failed') state.last = { index: answered.index, reason: answered.reason ?? '', at: new Date(Date.now()).toISOString() };
    const { after, raise } = laneTransition(state.incident, attempt);
    state.incident = after;
    if (!raise || !patched(OPERATIONAL_EVENTS_PATCH)) return;
    const index = answered?.index ?? state.last?.index;
    const event: OperationalEvent = {
      type: raise,
      timestamp: new Date(Date.now()).toISOString(),
      data: {
        sourceId: input.sourceId,
        destinationId: lane.destinationId,
        messageId: input.messageId,
        ...(lane.mapping !== undefined ? { mapping: lane.mapping } : index !== undefined && { webhookIndex: index }),
        ...(state.last && raise !== 'message.attempt.recovered' && { lastAttempt: { responseStatusCode: statusOfReason(state.last.reason), error: errorText(state.last.reason), timestamp: state.last.at } }),
      },
    };
    try {
      await raiseOperationalEvent(event, { run: workflowInfo().runId });
    } catch (err) {
      // An alert that cannot be raised never fails the delivery it is about; the metrics still count it.
      log.warn('operational event not raised', { type: raise, destinationId: lane.destinationId, error: (err as Error).message });
    }
  }

  /** What an attempt of this URL in this round asks, with the destination's hold state as it is now. */
  function attemptRequest(lane: Lane, webhookIndex: number, round: number): AttemptRequest {
    const { destinationId } = lane;
    const hold = holdOf(lane);
    const waitedOut = waitedOutPressure.get(pressureKey(lane, webhookIndex));
    return {
      destinationId,
      webhookIndex,
      round,
      ...(lane.mapping !== undefined && { mapping: lane.mapping }),
      messageId: input.messageId,
      // Whichever the input carries for this destination, unchanged: the workflow never opens a
      // sealed body, so a shredded history replays like any other.
      ...bodyOf(input.destinationBodies?.[destinationId] ?? input),
      timeoutMs: policy.timeoutMs,
      ...(windowIsHard && { notAfterMs: deadlineOf(lane) }),
      ...(flowControl && {
        flowControl: true,
        holdLeftMs: policy.maxHoldMs! - hold.heldMs,
        ...(hold.reservedSlotMs !== undefined && { reservedSlotMs: hold.reservedSlotMs }),
        ...(hold.last && { afterHold: hold.last }),
        ...(waitedOut !== undefined && { waitedOutPressureMs: waitedOut }),
      }),
      // An activity's input is not part of the command's identity: no patch needed.
      ...(input.replay && { replayId: input.replay.id }),
      ...(input.trace !== undefined && patched(TRACE_CONTEXT_PATCH) && { trace: input.trace }),
      ...(functionVersions.has(destinationId) && { functionVersion: functionVersions.get(destinationId) }),
    };
  }

  /**
   * `knownCount` undefined: no attempt to this destination has answered yet. `firstLocal`: the
   * delivery's first local attempt, already scheduled by attemptFirstLocally (see there).
   */
  async function attempt(lane: Lane, webhookIndex: number, round: number, knownCount: number | undefined, mayRunLocally: boolean, inSlowLane = false, firstLocal?: Promise<AttemptResult>): Promise<Attempted> {
    const firstAttempt = mayRunLocally && round === 1 && webhookIndex === 0;
    let request = attemptRequest(lane, webhookIndex, round);
    try {
      if (inSlowLane) return pinned(lane.destinationId, await attemptWebhookInSlowLane(request));
      if (firstAttempt && policy.firstAttemptLocal) {
        const local = pinned(lane.destinationId, await (firstLocal ?? attemptWebhookLocally(request)));
        if (!local.deferred) return local;
        // A function destination's first ask always defers (a handler may take its whole time limit):
        // the regular attempt runs the version that ask pinned.
        if (local.functionVersion !== undefined) request = { ...request, functionVersion: local.functionVersion };
      }
      return pinned(lane.destinationId, await attemptWebhook(request));
    } catch (err) {
      // A regular activity's error arrives wrapped in an ActivityFailure; a local activity's arrives
      // as it was thrown (an ApplicationFailure, or a TimeoutFailure): the store away at send time
      // (a PostgreSQL restart) failed whole deliveries until these counted as a lost attempt too.
      // A cancellation still ends the delivery.
      if (!(err instanceof ActivityFailure || err instanceof ApplicationFailure || err instanceof TimeoutFailure)) throw err;
      const outcome: AttemptOutcome = { kind: 'retry', reason: `attempt lost: ${err.cause?.message ?? err.message}` };
      // The lost attempt could not say how many URLs there are now; keep the last known count. With
      // none known yet (the first attempt was lost), take as many as a destination may have, so the
      // round still tries URLs 1..n: an attempt past the real end answers with the real count and
      // no outcome, which ends the round.
      const webhookCount = knownCount ?? (lane.mapping !== undefined ? 1 : patched(LOST_ATTEMPT_PATCH) ? MAX_WEBHOOKS : 1);
      return { destinationEnabled: true, webhookCount, outcome, lost: true };
    }
  }

  /**
   * An attempt to one URL; while the worker answers "busy" (its per-webhook cap is reached) it waits
   * a little and asks the same URL again: a healthy webhook under a burst is not a failed attempt,
   * so it neither fails over to the next URL nor makes the round back off. Until the window's end:
   * then the busy answer counts as the retryable outcome it carries. Since the slow lane, the next
   * attempt goes there and waits for its turn instead of asking again after a while.
   */
  async function attemptInTurn(lane: Lane, webhookIndex: number, round: number, knownCount: number | undefined, slowLaneFirst: boolean, first?: FirstLocal): Promise<Attempted> {
    // Asked only for a URL that failed in the slow lane last round: an ordinary delivery never reaches it.
    const startSlow = slowLaneFirst && patched(SLOW_LANE_FIRST_PATCH);
    let result = await attemptUnheld(lane, webhookIndex, round, knownCount, !startSlow, startSlow, first);
    for (let busy = 1; result.busy; busy++) {
      if (!patched(BUSY_WAITS_PATCH)) break;
      if (patched(SLOW_LANE_PATCH)) {
        if (!canRetryAt(Date.now(), 0, deadlineOf(lane))) break;
        result = await attemptUnheld(lane, webhookIndex, round, knownCount, false, true);
        continue;
      }
      const wait = busyWait(busy, policy, Math.random());
      if (!canRetryAt(Date.now(), wait, deadlineOf(lane))) break;
      await sleep(wait);
      result = await attemptUnheld(lane, webhookIndex, round, knownCount, false);
    }
    return result;
  }

  /**
   * An attempt that waits out holds: while the activity answers "held" (destination
   * paused or throttled, URL backpressured), nothing was sent and nothing counts; sleep as long as it
   * says (or, paused, until the next check or a resume signal) and ask again. Held time moves this destination's window
   * end; past policy.maxHoldMs of it in all, the delivery fails with that reason.
   */
  async function attemptUnheld(lane: Lane, webhookIndex: number, round: number, knownCount: number | undefined, mayRunLocally: boolean, inSlowLane = false, first?: FirstLocal): Promise<Attempted> {
    const { destinationId } = lane;
    const hold = holdOf(lane);
    const resumesSoFar = () => resumes.get(destinationId) ?? 0;
    // Counted before asking: a resume that lands while the ask is under way still wakes the wait.
    let resumesAtAsk = first?.resumesAtAsk ?? resumesSoFar();
    let result: Attempted = await attempt(lane, webhookIndex, round, knownCount, mayRunLocally, inSlowLane, first?.local);
    while (flowControl && result.held) {
      const left = policy.maxHoldMs! - hold.heldMs;
      if (left <= 0) return { ...result, heldTooLong: holdExceededReason(policy.maxHoldMs!, result.held.reason) };
      const wait = holdWaitMs(result.held, ++hold.consecutive, policy, left);
      if (hold.consecutive === 1) log.info('delivery held', { destinationId, webhookIndex, reason: result.held.reason });
      const since = Date.now();
      // Paused: wait for the next check or the destination's resume, whichever comes first; since
      // the flow-change patch (above) any hold ends early when the destination's flow control changes.
      const asked = resumesAtAsk;
      const wokenSince = () => resumesSoFar() > asked;
      let woken = false;
      if (result.held.reason === 'paused') await condition(wokenSince, wait);
      else if (patched(WAKE_HOLDS_PATCH)) woken = await condition(wokenSince, wait);
      else await sleep(wait);
      const heldMs = Math.max(0, Date.now() - since);
      hold.heldMs += heldMs;
      // Woken early: a slot reserved under the old rate limit is given up, and the ask after this
      // one reserves under the new limit. A backpressure waited to its end is waited out.
      hold.reservedSlotMs = woken ? undefined : result.held.reservedSlotMs;
      if (!woken && result.held.pressureUntilMs !== undefined) waitedOutPressure.set(pressureKey(lane, webhookIndex), result.held.pressureUntilMs);
      hold.last = { reason: result.held.reason, ms: heldMs };
      resumesAtAsk = resumesSoFar();
      result = await attempt(lane, webhookIndex, round, knownCount, false, inSlowLane);
    }
    hold.consecutive = 0;
    hold.reservedSlotMs = undefined;
    hold.last = undefined;
    return inSlowLane ? { ...result, inSlowLane } : result;
  }

  /**
   * The common case, the first URL accepting the first attempt, awaited here without the layers of
   * the rules below (busy, held, lost, deferred): the SDK captures a stack trace for every promise a
   * workflow makes (its stack-trace query), the largest share of a delivery's workflow-thread time,
   * and each layer is two more promises. Any other answer goes through those rules, which take the
   * attempt already scheduled as their first: the commands are the same as theirs, in the same order.
   */
  async function attemptFirstLocally(lane: Lane): Promise<Attempted> {
    const first: FirstLocal = { resumesAtAsk: resumes.get(lane.destinationId) ?? 0, local: attemptWebhookLocally(attemptRequest(lane, 0, 1)) };
    try {
      const result = await first.local;
      if (!result.deferred && !result.held && !result.busy) return result;
    } catch {
      // A lost attempt: the rules below await it again and count it as one.
    }
    return attemptInTurn(lane, 0, 1, undefined, false, first);
  }

  /**
   * An actions destination's matched mappings, each its own request with its own rounds
   * and retries, in parallel; the destination's report adds them up (delivery/mapping-lanes.ts).
   */
  async function deliverMappings(destinationId: string, names: string[]): Promise<DestinationReport> {
    const lanes = await Promise.all(names.map((mapping) => deliverTo(destinationId, mapping)));
    return mappingsReport(destinationId, names, lanes);
  }

  async function deliverTo(destinationId: string, mapping?: string): Promise<DestinationReport> {
    const lane: Lane = mapping === undefined ? { destinationId } : { destinationId, mapping };
    const report = await deliverLane(lane);
    if (report.status === 'failed') await operationalTransition(lane, 'exhausted');
    return report;
  }

  async function deliverLane(lane: Lane): Promise<DestinationReport> {
    const { destinationId, mapping } = lane;
    const givenUp = new Set<number>();
    // URLs whose last attempt failed in the slow lane: their next round starts there.
    const failedInSlowLane = new Set<number>();
    // Learned from the first attempt's answer; the store may change it between rounds.
    let webhookCount = 1;
    let countKnown = false;
    let lastReason = '';
    for (let round = 1; ; round++) {
      let retryAfterMs: number | undefined;
      const reasons: string[] = [];
      // URLs whose answer this round paused them for every message, by index.
      const pressed = new Map<number, Pressure>();
      for (let index = 0; index < webhookCount; index++) {
        if (givenUp.has(index)) continue;
        if (windowIsHard && Date.now() >= deadlineOf(lane)) {
          return { destinationId, status: 'failed', rounds: round, reason: `retry window exhausted: ${reasons.join('; ') || lastReason}` };
        }
        const result = round === 1 && index === 0 && policy.firstAttemptLocal ? await attemptFirstLocally(lane) : await attemptInTurn(lane, index, round, countKnown ? webhookCount : undefined, failedInSlowLane.has(index));
        if (result.heldTooLong) return { destinationId, status: 'failed', rounds: round, reason: result.heldTooLong };
        if (!result.destinationEnabled) return { destinationId, status: 'stopped', rounds: round, reason: 'destination switched off or deleted' };
        if (result.stopped !== undefined) return { destinationId, status: 'stopped', rounds: round, reason: result.stopped };
        webhookCount = result.webhookCount;
        if (!result.lost) countKnown = true;
        const outcome = result.outcome;
        if (!outcome) break;
        if (result.inSlowLane && outcome.kind === 'retry') failedInSlowLane.add(index);
        else failedInSlowLane.delete(index);
        if (outcome.kind === 'success') {
          // The URL that accepted: this one, or one whose answer came after its attempt was reported lost.
          const accepted = result.acceptedBy ?? index;
          // Only a lane that sent `failing` has a transition to make: the common case awaits nothing more.
          if (incidents.get(laneKey(lane))?.incident.failingSent) await operationalTransition(lane, 'succeeded', { index: accepted });
          return { destinationId, status: 'delivered', webhookIndex: accepted, rounds: round };
        }
        await operationalTransition(lane, 'failed', { index, reason: outcome.reason });
        reasons.push(`${whereInLane(lane, index)}: ${outcome.reason}`);
        if (outcome.kind === 'permanent') givenUp.add(index);
        if (outcome.kind === 'retry' && outcome.retryAfterMs !== undefined) retryAfterMs = Math.max(retryAfterMs ?? 0, outcome.retryAfterMs);
        if (result.pressure) pressed.set(index, result.pressure);
      }
      if (webhookCount === 0) return { destinationId, status: 'stopped', rounds: round, reason: mapping === undefined ? 'destination has no webhook URLs' : 'mapping removed or switched off' };
      const reason = reasons.join('; ');
      lastReason = reason;
      if (givenUp.size >= webhookCount) return { destinationId, status: 'failed', rounds: round, reason: `every webhook failed permanently: ${reason}` };
      const delay = nextBackoff(round, policy, Math.random(), retryAfterMs);
      if (!canRetryAt(Date.now(), delay, deadlineOf(lane))) return { destinationId, status: 'failed', rounds: round, reason: `retry window exhausted: ${reason}` };
      log.info('round failed; retrying', { destinationId, ...(mapping !== undefined && { mapping }), round, delayMs: delay, reason });
      setStatus('retrying');
      // A wait that honours a URL's pause (429/503 with Retry-After) ends early when the operator
      // clears it; one waited to its end waits the pause out, on this workflow's clock.
      let woken = false;
      if (flowControl && pressed.size > 0 && patched(CLEARED_PRESSURE_PATCH)) {
        const asked = resumes.get(destinationId) ?? 0;
        woken = await condition(() => (resumes.get(destinationId) ?? 0) > asked, delay);
      } else await sleep(delay);
      if (!woken) for (const [index, pressure] of pressed) if (delay >= pressure.leftMs) waitedOutPressure.set(pressureKey(lane, index), pressure.untilMs);
    }
  }

  // One destination (the usual case) without Promise.all's promises; several in parallel.
  // A destination the input names mappings for is an actions destination (inputs from
  // before it name none, so they replay the same commands).
  // With several destinations, each one's outcome, recorded as it finishes (in the
  // workflow task that saw it finish: no task of its own); the others stay `retrying` until theirs.
  const finished = new Map<string, DestinationReport['status']>();
  const recordOutcome = (report: DestinationReport) => {
    if (input.destinationIds.length < 2 || !patched(DESTINATION_OUTCOMES_PATCH)) return report;
    finished.set(report.destinationId, report.status);
    upsertSearchAttributes([{ key: OUTCOMES, value: outcomeEntries(input.destinationIds, finished, input.replay !== undefined) }]);
    return report;
  };
  const deliverDestination = async (destinationId: string) => {
    const mappings = input.mappings?.[destinationId];
    return recordOutcome(await (mappings ? deliverMappings(destinationId, mappings) : deliverTo(destinationId)));
  };
  const destinations = input.destinationIds.length === 1 ? [await deliverDestination(input.destinationIds[0])] : await Promise.all(input.destinationIds.map(deliverDestination));
  const report: DeliveryReport = { messageId: input.messageId, destinations };
  deliveriesSink.ended(
    destinations.map((d) => d.status),
    destinations.map((d) => d.destinationId),
  );
  const failed = destinations.filter((d) => d.status === 'failed');
  if (failed.length > 0) {
    setStatus('failed');
    throw ApplicationFailure.nonRetryable(
      failed.map((d) => `${d.destinationId}: ${d.reason}`).join(' | '),
      'DeliveryFailed',
      report,
    );
  }
  if (!destinations.every((d) => d.status === 'delivered')) setStatus('stopped');
  // The run completing is the `delivered` status (policy.deliveredImplied): no upsert on success.
  else if (policy.deliveredImplied !== true) setStatus('delivered');
  return report;
}
