import type { OperationalEvent } from './delivery/operational-events';
import type { DestinationOutcome } from './delivery/destination-outcomes';
import type { LatestRun, RedeliveryFilter, RedeliveryJob, RedeliveryProgress } from './delivery/redelivery-job';
import type { DeliveryInput, MessageType, SealedBody } from './delivery/types';
import type { ComputationRef } from './personas/types';
import type { ReplayPlan } from './delivery/replay';
import type { ForwardingJob } from './messages/forwarding-job';
import type { SourceFunctionRequest } from './messages/source-function-request';

/**
 * What the API and the message path need from Temporal, as interfaces: src/temporal/ implements
 * them, tests may pass their own. Kept apart from both so neither side imports the other.
 */

/** One task queue as /admin/status reports it: pollers seen within the window, and the latest poll. */
export interface TaskQueueHealth {
  name: string;
  workers: number;
  lastPollAt?: string;
}

/** Durable starts of delivery workflows, and readiness. */
export interface Deliveries {
  /**
   * Resolves only when Temporal has accepted (or already has) a workflow for every input. Past
   * `deadline` (epoch ms) no call is retried and no new start begins.
   */
  start(inputs: DeliveryInput[], deadline?: number, options?: StartOptions): Promise<void>;
  /** Resolves once no Temporal call is under way; the app's close awaits it before the connection closes. */
  drain(): Promise<void>;
  /** Whether Temporal's frontend answers for the namespace: all ingestion needs of it (GET /health). */
  reachable(): Promise<boolean>;
  /**
   * For GET /admin/status: Temporal answers, its namespace has every search attribute Switchyard uses, and each watched
   * task queue (deliveries, Personas deliveries) has a worker polling it lately; `problems` names
   * each one that is wrong, with the fix where there is one.
   */
  health(): Promise<{ temporal: boolean; searchAttributes: boolean; worker: boolean; taskQueues: TaskQueueHealth[]; problems: string[] }>;
  /**
   * Terminates the running deliveries made under these ids (as user id or anonymous id; delete
   * notifications excepted), with `reason` (which must not name a user). Returns how many.
   */
  stopUsers(ids: string[], reason: string): Promise<number>;
  /**
   * Deletes every delivery workflow made under these ids (as user id or anonymous id; delete
   * notifications excepted), finished, stopped or still running: their events live in workflow
   * history. Returns how many.
   */
  forgetUsers(ids: string[]): Promise<number>;
  /**
   * Deliveries from Temporal visibility, running first (temporal/delivery-listing.ts); 'invalid_cursor'
   * when the cursor is not one a page gave; 'unsearchable_user_id' for a userId with a double quote,
   * a backslash or a control character while visibility holds plaintext ids (PAYLOAD_ENCRYPTION=off).
   */
  list(filter: DeliveryFilter): Promise<DeliveryPage | 'invalid_cursor' | 'unsearchable_user_id'>;
  /** How many deliveries match (Temporal visibility's count; the filter as list takes it, without paging). */
  count(filter: Omit<DeliveryFilter, 'limit' | 'cursor'>): Promise<number>;
  /** The latest run of a message's delivery, read from its history; undefined when Temporal has none. */
  history(sourceId: string, messageId: string): Promise<DeliveryHistory | undefined>;
  /** Starts a redelivery (input.redelivery set) as a new run of the same workflow id; 'running' while a run is under way. */
  redeliver(input: DeliveryInput): Promise<{ workflowId: string; runId: string } | 'running'>;
  /** Starts a bulk redelivery job (a workflow) for the runs matching `filter` that closed by now; its id. */
  startRedeliveryJob(sourceId: string, filter: RedeliveryFilter): Promise<{ id: string }>;
  /** A bulk redelivery job and its progress; undefined when Temporal has no such job. */
  redeliveryJob(id: string): Promise<RedeliveryJobView | undefined>;
  /**
   * Tells every running delivery to this destination, oldest first, that it was resumed
   * or that its flow control changed (a new rate limit, a cleared backpressure): held
   * ones ask again at once instead of at their next check. Returns how many were told.
   */
  wakeHeld(destinationId: string, why: WakeReason): Promise<number>;
  /**
   * Starts a tracking plan's forwarding job (messages/forwarding-job.ts) unless one of its id was
   * started already; resolves once Temporal holds it. Absent where nothing is forwarded.
   */
  forward?(job: ForwardingJob, deadline?: number): Promise<void>;
  /** Starts the workflow of one request to a source function's webhook; resolves once Temporal holds it. Absent: the webhook answers 503. */
  runSourceFunction?(request: SourceFunctionRequest, deadline: number): Promise<void>;
}

/** Why held deliveries are woken: their destination was resumed, or its rate limit or a URL's backpressure changed. */
export type WakeReason = 'resumed' | 'flow-changed';

/** A bulk redelivery job as `GET /admin/redeliveries/:id` shows it. */
export type RedeliveryJobView = RedeliveryJob & RedeliveryProgress;

/**
 * What a bulk redelivery job's activities need from Temporal (worker side): page the snapshot,
 * read a message's latest run and a run's input, start a redelivery, see whether a run closed.
 */
export interface RedeliveryRuns {
  /** One page of the job's snapshot (the ended runs it matches); `next` is absent on the last page. */
  page(job: RedeliveryJob, size: number, cursor?: string): Promise<{ runs: Array<{ messageId: string; workflowId: string; runId: string }>; next?: string }>;
  latest(workflowId: string): Promise<LatestRun | undefined>;
  input(workflowId: string, runId: string): Promise<DeliveryInput | undefined>;
  redeliver(input: DeliveryInput): Promise<{ workflowId: string; runId: string } | 'running'>;
  /** True once the run has closed (or is gone: deleted by a regulation). */
  closed(workflowId: string, runId: string): Promise<boolean>;
}

export type DeliveryStatusName = 'delivering' | 'retrying' | 'delivered' | 'failed' | 'stopped';

/** Filter values are validated by the API; the Temporal side checks them again before quoting them. Times are ISO 8601. */
export interface DeliveryFilter {
  sourceId?: string;
  destinationId?: string;
  /**
   * With destinationId, the deliveries whose outcome at that destination is this one
   * (SwitchyardOutcomes), live or replayed; `status` is then the message's and is not asked.
   */
  outcome?: { outcome: DestinationOutcome; replay: boolean };
  status?: DeliveryStatusName;
  type?: MessageType;
  userId?: string;
  since?: string;
  until?: string;
  limit: number;
  cursor?: string;
}

export interface DeliveryRow {
  messageId: string;
  sourceId: string;
  type: string;
  userId?: string;
  status: DeliveryStatusName;
  startedAt: string;
  closedAt?: string;
  workflowId: string;
  runId: string;
}

export interface DeliveryPage {
  deliveries: DeliveryRow[];
  nextCursor?: string;
}

/** One POST (or one lost attempt) to one webhook, as its history records it. */
export interface AttemptRecord {
  /** The mapping of an actions destination the attempt sent (its webhookIndex is then 0). */
  mapping?: string;
  webhookIndex: number;
  /** The URL as delivery/summary.ts webhookLabel shows it: no user info, query or token. */
  url?: string;
  round: number;
  startedAt?: string;
  durationMs?: number;
  httpStatus?: number;
  error?: string;
  outcome: 'success' | 'retry' | 'permanent';
  /** A function destination's console output of this attempt: sealed like the body (`sealedLogs`), or in the clear when the body is. */
  logs?: string[];
  errorMessage?: string;
  sealedLogs?: SealedBody;
}

export interface DestinationAttempts {
  destinationId: string;
  /** Absent while the delivery to it is under way. */
  status?: 'delivered' | 'failed' | 'stopped';
  reason?: string;
  attempts: AttemptRecord[];
}

export interface DeliveryHistory {
  input: DeliveryInput;
  row: DeliveryRow;
  /** The userId as visibility holds it: its keyed hash (the id itself with PAYLOAD_ENCRYPTION=off); what a token without payloads:read is shown. */
  visibleUserId?: string;
  destinations: DestinationAttempts[];
}

export interface StartOptions {
  /** The workflows' first task waits this long (Temporal start delay), e.g. for attempts already in flight to end. */
  startDelayMs?: number;
  /** Aborted: every start still under way is cancelled, retries included, and `start` rejects. */
  signal?: AbortSignal;
}

/** An audience or computed trait as its Temporal Schedule needs to know it. */
export interface ScheduledSync {
  computation: ComputationRef;
  sourceId: string;
  name: string;
  /** Cron expression, UTC. */
  schedule: string;
  paused: boolean;
}

/**
 * Personas syncs on a schedule: one Temporal Schedule per definition, created, updated, paused and
 * deleted with it, and a sync on demand.
 */
export interface SyncSchedules {
  /** Creates the schedule; unless paused, its first sync starts at once (seed: "When an audience is created..."). */
  create(sync: ScheduledSync): Promise<void>;
  /** Sets the cron expression and the paused state. */
  update(sync: ScheduledSync): Promise<void>;
  /** Deletes the schedule; a schedule already gone is not an error. */
  delete(computation: ComputationRef): Promise<void>;
  /** Starts a sync now (or finds the one the API started and is still running); the workflow to follow. */
  syncNow(sync: ScheduledSync): Promise<{ workflowId: string; runId: string }>;
}

/** Starts one delivery workflow on a task queue; false when Temporal already has it (same messageId). */
export type StartDelivery = (input: DeliveryInput, taskQueue: string) => Promise<boolean>;

/** What the API needs of a replay's workflow (temporal/replays.ts). */
export interface Replays {
  /** Starts the replay's workflow (its store row is made first). */
  start(plan: ReplayPlan): Promise<void>;
  /** Asks the running workflow to pause, resume or cancel; resolves once it has recorded the new status. */
  /**
   * Rejects with ReplayChangeUnanswered when the replay's workflow has not answered within the
   * deadline (no worker running, Temporal away): the caller answers 503, never waits for ever.
   */
  change(id: string, change: ReplayChange): Promise<void>;
}

export type ReplayChange = 'pause' | 'resume' | 'cancel';

/** What a replay's activities need of Temporal (worker side): start one replayed delivery, see how one ended. */
export interface ReplayDeliveries {
  /** false when the replay started this message before (a page run again after a crash). */
  start(input: DeliveryInput): Promise<boolean>;
  /**
   * A blocked-only replay: starts the message's own delivery (`message:<source>:<messageId>`,
   * as if it had passed at ingest). true when this replay started it (now, or on an earlier try of
   * the page); false when the message has its delivery already otherwise (an earlier recovery, or
   * the sender's resend once the plan let it through): it is not sent twice.
   */
  recover(input: DeliveryInput & { replay: { id: string } }): Promise<boolean>;
  /**
   * The replayed delivery's state: under way, or how it ended ('gone': Temporal has no such
   * workflow). `recoveredFrom`: the source of a blocked-only replay, whose deliveries are the messages' own.
   */
  outcome(replayId: string, messageId: string, recoveredFrom?: string): Promise<'running' | 'delivered' | 'failed' | 'gone'>;
}

/** A replay's pause, resume or cancel its workflow did not answer in time. */
export class ReplayChangeUnanswered extends Error {
  constructor(
    readonly change: ReplayChange,
    readonly waitedMs: number,
  ) {
    super(`the replay did not answer the ${change} within ${waitedMs} ms (no worker running, or Temporal away)`);
  }
}

/**
 * Operational events raised on their own lane (temporal/operational-events.ts). `scope`
 * names the incident (delivery/operational-events.ts incidentId): raised twice, one event goes out.
 */
export interface OperationalEvents {
  raise(event: OperationalEvent, scope: { run?: string; since?: string }): Promise<void>;
}
