/**
 * Archive and replay: the shapes the API, the replay workflow, its activities and the
 * store share, and the pure rules among them. Plain data only: they cross Temporal.
 */

import type { MessageBody, MessageType } from './types';

/** What the archive keeps of one accepted call, sealed as one (privacy/sealed-body.ts): the body as sent, and the call's `integrations`. */
export interface ArchivedCall extends Record<string, unknown> {
  type: MessageType;
  message: MessageBody;
  integrations?: Record<string, unknown>;
  /** The tracking plan's verdict at ingest: the body above is the call as sent, before any omission. */
  plan?: {
    status: 'passed' | 'omitted' | 'blocked';
    decidedBy?: string;
    violations: Array<{ violationType: string; field: string; description: string }>;
    /** The names the plan omitted (`properties.coupon`): a replay leaves them out again whatever today's plan says. Absent in calls archived before it. */
    omitted?: string[];
  };
}

export type ReplayStatus = 'running' | 'paused' | 'completed' | 'cancelled' | 'failed';

export const REPLAY_STATUSES: readonly ReplayStatus[] = ['running', 'paused', 'completed', 'cancelled', 'failed'];

/** A replay's counts: what it read, started, saw end, and left out (and why). */
export interface ReplayCounts {
  /** Archived messages in the range that the trigger matched (all of them without a trigger). */
  matched: number;
  /** Deliveries started (a dry run starts none: it sends matched minus skipped). */
  started: number;
  /** Of those, delivered; and failed (retry window or hold used up). */
  delivered: number;
  failed: number;
  skipped: {
    /** The user was erased (a DELETE regulation destroyed the data key) after the message was archived. */
    erased: number;
    /** The user is suppressed now, or was after the message was accepted. */
    suppressed: number;
    /** The destination's consent, the call's `integrations` or the destination's filters stop it today. */
    filtered: number;
    /** The source's tracking plan, as it is today, blocks it (plans/plan-decision.ts). */
    blocked: number;
    /**
     * A blocked-only replay: the message has its delivery already (an earlier blocked-only
     * replay sent it, or its sender sent the messageId again once the plan let it through): never twice.
     */
    duplicate: number;
  };
}

/** What `POST /admin/replays` asks. Times are ISO 8601; `since` inclusive, `until` exclusive, on receivedAt. */
export interface ReplayRequest {
  sourceId: string;
  /** Absent for a blocked-only replay: every enabled destination of the source. */
  destinationId?: string;
  since: string;
  until: string;
  trigger?: string;
  dryRun?: boolean;
  /** Only the messages the tracking plan blocked at ingest, validated again under today's plan. */
  blockedOnly?: boolean;
}

/** A replay as `GET /admin/replays/:id` shows it (the store's row, written by its workflow). */
export interface Replay extends ReplayCounts {
  id: string;
  sourceId: string;
  /** null: a blocked-only replay, to every enabled destination of the source. */
  destinationId: string | null;
  since: string;
  until: string;
  trigger: string | null;
  dryRun: boolean;
  /** Only what the tracking plan blocked at ingest, validated again under today's plan. */
  blockedOnly: boolean;
  status: ReplayStatus;
  createdAt: string;
  finishedAt: string | null;
}

/** What a replay's workflow is started with: the request, resolved, and the limits it runs under. */
export interface ReplayPlan {
  id: string;
  sourceId: string;
  /** The one destination; absent for a blocked-only replay (every enabled destination of the source). */
  destinationId?: string;
  since: string;
  until: string;
  trigger?: string;
  dryRun: boolean;
  /**
   * Recovery: only archived messages the tracking plan blocked, each delivered
   * under its own message's workflow id (`message:<source>:<messageId>`, as if it had passed at
   * ingest), so it reaches every enabled destination once, whichever replay or resend comes later.
   * Absent in plans from before it: those replays run as they did.
   */
  blockedOnly?: boolean;
  /** REPLAY_MAX_IN_FLIGHT when the replay was made: fixed for its whole life. */
  maxInFlight: number;
  /** Pages and checks per workflow run before it continues as new (default 200; tests make it small). */
  stepsPerRun?: number;
}

/** A replay as the admin API shows it (`GET /admin/replays/:id`): with `archiveFrom` when its range started before the archive. */
export type ReplayView = Replay & { archiveFrom?: string };

export const REPLAY_ID_PATTERN = '^rpl_[0-9a-f]{32}$';

export const NO_COUNTS: ReplayCounts = { matched: 0, started: 0, delivered: 0, failed: 0, skipped: { erased: 0, suppressed: 0, filtered: 0, blocked: 0, duplicate: 0 } };

/** The replay's own workflow (one per replay; its runs continue as new under this id). */
export const replayWorkflowId = (replayId: string) => `replay:${replayId}`;

/**
 * One replayed message's delivery: its own workflow id, so it never meets the message's original
 * delivery (`message:…`), and a page run again after a crash finds it started and starts nothing twice.
 */
export const replayDeliveryWorkflowId = (replayId: string, messageId: string) => `replay:${replayId}:${messageId}`;

/** The request header a replayed delivery carries, naming its replay. */
export const REPLAY_HEADER = 'x-switchyard-replay';

/**
 * Temporal priority of replayed deliveries (1 is first; unset is 3, the middle): their workflow and
 * activity tasks wait while live deliveries' tasks are queued on the same task queue.
 */
export const REPLAY_PRIORITY = 5;

/** Whether a replay in this status may still change (pause, resume, cancel). */
export const isReplayOpen = (status: ReplayStatus) => status === 'running' || status === 'paused';

/**
 * Adds page counts to running ones. Counts carried over from a run before blocked-only replays existed have no
 * `blocked` or `duplicate`: read as 0 (replay-archive.ts makes its state's counts whole this way first).
 */
export function addCounts(a: ReplayCounts, b: Partial<Omit<ReplayCounts, 'skipped'>> & { skipped?: Partial<ReplayCounts['skipped']> }): ReplayCounts {
  return {
    matched: a.matched + (b.matched ?? 0),
    started: a.started + (b.started ?? 0),
    delivered: a.delivered + (b.delivered ?? 0),
    failed: a.failed + (b.failed ?? 0),
    skipped: {
      erased: a.skipped.erased + (b.skipped?.erased ?? 0),
      suppressed: a.skipped.suppressed + (b.skipped?.suppressed ?? 0),
      filtered: a.skipped.filtered + (b.skipped?.filtered ?? 0),
      blocked: (a.skipped.blocked ?? 0) + (b.skipped?.blocked ?? 0),
      duplicate: (a.skipped.duplicate ?? 0) + (b.skipped?.duplicate ?? 0),
    },
  };
}
