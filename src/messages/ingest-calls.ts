import { setMaxListeners } from 'node:events';
import { formatDuration } from '../delivery/duration';
import type { Deliveries } from '../ports';
import type { Store } from '../store/types';
import { acceptCalls } from './accept-calls';
import type { ArchiveCalls } from './archive-calls';
import type { DecisionRecorder } from './message-count-recorder';
import { PendingCounts } from './pending-counts';
import { outgoing, type PlanDeliveries } from './plan-deliveries';
import { requestDataKeys } from './request-data-keys';
import { seenUsers } from './seen-users';
import { suppressedUsers } from './suppressed-users';
import { isAboutSuppressed } from '../delivery/suppression';
import { consentUpdate, profileUpdates, type ProfileUpdate } from '../personas/profile-updates';
import type { Message } from '../delivery/payload';
import { decisionFlags, fateOf, sees, type CallFate } from './call-fate';
import { callTypeLabel, type Metrics } from '../metrics';
import type { IngestTrace } from '../tracing/ingest-spans';
import type { SourcePlanReader } from '../plans/plan-reader';
import { erasableIds } from '../delivery/erasure';
import type { ViolationRecorder } from '../plans/violation-recorder';
import { archivedVerdict, planCalls, type PlannedCall } from './plan-calls';
import type { Call } from './call';
import type { RecordFates } from './record-fates';

export interface IngestDependencies {
  store: Store;
  deliveries: Deliveries;
  planDeliveries: PlanDeliveries;
  /** INGEST_START_TIMEOUT: how long the workflow starts of one request may take before the sender hears "unavailable". */
  startTimeoutMs: number;
  /** Counts each source's received messages for the overview; the planner counts what each destination did not get. */
  /** The overview's counts: what the source received and each destination's stops, recorded once the starts succeed. */
  recorder?: DecisionRecorder;
  /** Counts accepted messages by call type (the API process's metrics). */
  metrics?: Pick<Metrics, 'messagesIngested'>;
  /** Writes the accepted calls to the archive (absent: ARCHIVE_RETENTION=0). */
  archive?: ArchiveCalls;
  /** The source's tracking plan and schema controls (absent: no plans are read). */
  plans?: SourcePlanReader;
  /** Where the plan's violations are counted. */
  violations?: ViolationRecorder;
  /** Records each call's decision per destination ("what happened to one event"); absent: nothing recorded. */
  fates?: RecordFates;
  /** Sends blocked events and violations into the sources the controls name, once this request's starts succeeded. */
  forward?: (planned: PlannedCall[], request: IngestRequest, plan: { id: string; name: string }, forwarding: { violationsTo?: string; blockedTo?: string }) => Promise<void>;
}

export interface IngestRequest {
  sourceId: string;
  calls: Call[];
  /** When the request arrived (epoch ms): receivedAt of every message and the base of clock-skew correction. */
  receivedAtMs: number;
  /** Where INGEST_START_TIMEOUT counts from (epoch ms; default receivedAtMs): earlier when the store was waited on before. */
  budgetFromMs?: number;
  /** A batch's own sentAt, for calls that carry none. */
  batchSentAt?: string;
  inBatch: boolean;
  /** The sender's address as the API sees it (after TRUST_PROXY): `context.ip` of calls that bring none. */
  ip?: string;
  /** The request's spans while tracing is on; each message's trace context then rides in its workflow input. */
  trace?: Pick<IngestTrace, 'messageCarrier'>;
  /** Calls forwarded from another source's plan: never forwarded again, whatever this source's controls say. */
  forwarded?: boolean;
}

export type IngestResult =
  | { status: 'accepted'; deliveries: number }
  | { status: 'rejected'; problem: string }
  | { status: 'unavailable'; reason: string };

/**
 * While Temporal is unreachable the client library keeps retrying a start for tens of seconds;
 * the sender should hear 503 long before its own timeout instead. At the deadline every start still
 * under way is cancelled, retries waiting for their turn included, so nothing of the request
 * outlives its answer by more than the cancel (nor the connection, closed after the app's drain). A start that landed in time is found by id on the sender's retry, so nothing is
 * delivered twice.
 */
function withinStartTimeout(timeoutMs: number, start: (deadline: number, signal: AbortSignal) => Promise<void>): Promise<void> {
  const abort = new AbortController();
  // One listener per workflow start (the SDK's), and a batch is up to hundreds of starts.
  setMaxListeners(0, abort.signal);
  const starting = start(Date.now() + timeoutMs, abort.signal);
  starting.catch(() => undefined);
  // The sender hears 503 on time even where a cancel is not immediate (an eager start's native
  // connection honours the deadline but takes no AbortSignal); the drain awaits what is left.
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      abort.abort();
      reject(new Error(`workflow starts not confirmed within ${formatDuration(timeoutMs)}`));
    }, timeoutMs);
  });
  return Promise.race([starting, timedOut]).finally(() => clearTimeout(timer));
}

/** What a call changes in the profiles, as its fate lets it: everything, its consent alone, or nothing. */
function profileSide(message: Message, fate: CallFate): ProfileUpdate[] {
  if (sees('profiles', fate)) return profileUpdates([message]);
  const consent = sees('consent', fate) ? consentUpdate(message) : undefined;
  return consent ? [consent] : [];
}

/**
 * The one path from calls to deliveries, in order: accept every call (all or nothing), look up
 * which users are suppressed, record what the others change in the profiles, plan a delivery per
 * message and destination the rules let through (plan-deliveries.ts), start those workflows. `accepted` means Temporal holds every one of them.
 */
export async function ingestCalls(deps: IngestDependencies, request: IngestRequest): Promise<IngestResult> {
  const acceptance = acceptCalls(request.calls, request);
  if ('problem' in acceptance) return { status: 'rejected', problem: acceptance.problem };
  // The source's plan, once per message, before anything else reads the calls: an
  // omitted property reaches no profile, no workflow; a blocked message only the archive.
  const planned = deps.plans ? await planCalls(deps.plans, request.sourceId, acceptance.accepted) : undefined;
  const accepted = planned?.calls ?? acceptance.accepted;
  // A suppressed user's calls are answered as accepted (the sender must not retry) but
  // go nowhere: no profile row, and the decision stops them for every destination (counted there).
  const suppressed = await suppressedUsers(deps.store.suppressions, accepted.map((a) => a.message));
  // One fate per call (call-fate.ts): every step below reads its table instead of deciding alone.
  const fates = accepted.map((a, i) => fateOf(isAboutSuppressed(a.message, suppressed), planned?.calls[i].verdict));
  const counts = new PendingCounts();
  counts.received(request.sourceId, request.receivedAtMs, accepted.filter((_, i) => sees('overview', fates[i])).length);

  // The archive and the sealing need the same users' data keys: one read for both.
  const dataKeys = requestDataKeys(deps.store.dataKeys);
  // The archive is written beside the profiles and the plan, and awaited before any
  // workflow starts: an answered request is archived.
  // Each call as sent (before any omission), with the plan's verdict: blocked ones can be replayed.
  const toArchive = planned ? planned.calls.map((call) => ({ message: call.original, integrations: call.integrations, plan: archivedVerdict(call.verdict) })) : accepted;
  const archived = deps.archive?.(request.sourceId, toArchive.filter((_, i) => sees('archive', fates[i])), dataKeys);
  archived?.catch(() => undefined);
  // Personas profiles: traits, events and aliases of the whole request in one transaction, the
  // consent every kept call carries, and the user ids this source has now seen with the ids linked
  // beside them (a DELETE regulation notifies only sources that saw the user, and reaches those ids).
  const updates = accepted.flatMap((a, i) => profileSide(a.message, fates[i]));
  const seen = seenUsers(accepted.filter((_, i) => sees('seenUsers', fates[i])).map((a) => a.message));
  await deps.store.personas.profiles.record(request.sourceId, updates, seen, new Date(request.receivedAtMs).toISOString());
  const plan = await deps.planDeliveries(
    request.sourceId,
    accepted.map((a, i) => outgoing(a.message, { integrations: a.integrations, ...decisionFlags(fates[i]) }, request.trace?.messageCarrier(a.message.messageId))),
    dataKeys,
    counts,
  );
  const inputs = plan.status === 'planned' ? plan.inputs : [];
  await archived;
  // INGEST_START_TIMEOUT bounds the whole request, not only its starts: store reads that were slow
  // (a pool reconnecting after a PostgreSQL restart) leave the starts less time, so the sender still
  // hears an answer within the timeout instead of timing out itself (a drill saw 5 s + 10 s).
  const startBudgetMs = deps.startTimeoutMs - (Date.now() - (request.budgetFromMs ?? request.receivedAtMs));
  if (startBudgetMs <= 0) return { status: 'unavailable', reason: `the request used up INGEST_START_TIMEOUT (${formatDuration(deps.startTimeoutMs)}) before its workflow starts` };
  try {
    await withinStartTimeout(startBudgetMs, (deadline, signal) => deps.deliveries.start(inputs, deadline, { signal }));
  } catch (err) {
    return { status: 'unavailable', reason: (err as Error).message };
  }
  if (planned) {
    // Forwarding jobs held by Temporal before the answer; the target's ingestion runs in them
    // (forwarding-job.ts), so only Temporal refusing a job is the sender's 503, and its retry finds them by id.
    const { controls, plan: compiled } = planned.source;
    const forwarding = request.forwarded ? {} : { violationsTo: controls.forwardingViolationsTo, blockedTo: controls.forwardingBlockedEventsTo };
    // Forwarding reads only the calls whose fate it sees (never a suppressed user's); among them
    // the forwarder sends blocked events as blocked and every call's violations (call-fate.ts).
    const forwarded = planned.calls.filter((_, i) => sees('forwardViolations', fates[i]) || sees('forwardBlocked', fates[i]));
    if (deps.forward && compiled && (forwarding.violationsTo || forwarding.blockedTo) && forwarded.length > 0) {
      try {
        await deps.forward(forwarded, request, compiled, forwarding);
      } catch (err) {
        return { status: 'unavailable', reason: `forwarding for the tracking plan failed: ${(err as Error).message}` };
      }
    }
    planned.calls.forEach(({ message, verdict }, i) => {
      if (sees('violations', fates[i])) deps.violations?.record(request.sourceId, { type: message.type, eventName: message.event ?? message.name ?? '', messageId: message.messageId, userIds: erasableIds(message) }, verdict.violations, request.receivedAtMs);
    });
  }
  // What happened to each call at each destination, once Temporal holds what was sent: a request
  // answered 503 before this point is sent again and recorded then (a retry's rows are kept once).
  if (deps.fates && plan.status === 'planned') {
    try {
      await deps.fates(request.sourceId, accepted.map((a, i) => ({ message: a.message, fate: fates[i] })), plan.decisions, dataKeys);
    } catch (err) {
      return { status: 'unavailable', reason: `recording the calls' fates failed: ${(err as Error).message}` };
    }
  }
  counts.commitTo(deps.recorder);
  if (deps.metrics) for (const { message } of accepted) deps.metrics.messagesIngested.inc({ type: callTypeLabel(message.type) });
  return { status: 'accepted', deliveries: inputs.length };
}

/** Ingests calls into another source (forwarding), as if sent there, never forwarded again. */
export type ForwardCalls = (sourceId: string, calls: Call[]) => Promise<void>;
