/**
 * A bulk redelivery job (`POST /admin/sources/:sourceId/redeliver`): what it matches and
 * the rule that decides, per matching run, whether the job redelivers it. Pure, so the workflow,
 * the activities and the unit tests share it.
 */

export type RedeliveryStatusFilter = 'failed' | 'stopped';

export interface RedeliveryFilter {
  status: RedeliveryStatusFilter;
  /** ISO 8601: runs started at or after. */
  since: string;
  /** ISO 8601: runs started before. */
  until: string;
  destinationId?: string;
}

export interface RedeliveryJob {
  id: string;
  sourceId: string;
  filter: RedeliveryFilter;
  /** When the job was made: the snapshot is the runs that had closed by then. */
  createdAt: string;
}

export const REDELIVERY_JOB_ID_PATTERN = '^rdl_[0-9a-f]{32}$';

/** The job's workflow id (one workflow per job; its runs continue as new under the same id). */
export const redeliveryJobWorkflowId = (jobId: string) => `redelivery:${jobId}`;

/** What a redelivery run records about itself (workflow memo, strongly consistent via describe). */
export interface RedeliveryMemo {
  redeliveryJob?: string;
  previousRunId?: string;
}

/** The latest run of a message's workflow id, as describe reads it. */
export interface LatestRun extends RedeliveryMemo {
  runId: string;
}

/**
 * For one run the job's snapshot matched:
 * - `started_by_this_job`: the latest run is this job's redelivery of exactly this run (an activity
 *   retried after a crash finds the start it made before): counted as started, not started again;
 * - `redeliver`: the matched run is still the message's latest: start a redelivery;
 * - `skip`: a newer run exists (the sender re-sent it, someone redelivered it, or this job already
 *   redelivered a later run of the same message): delivering again would send it twice.
 * A message is redelivered only from its latest run, so at most one matched run per message can
 * ever lead to a start, however often a page is retried.
 */
export type RowDecision = 'redeliver' | 'started_by_this_job' | 'skip';

export function decideRow(matchedRunId: string, latest: LatestRun, jobId: string): RowDecision {
  if (latest.redeliveryJob === jobId && latest.previousRunId === matchedRunId) return 'started_by_this_job';
  if (latest.runId === matchedRunId) return 'redeliver';
  return 'skip';
}

/** A redelivery the job started and waits for, to count it finished once it closes. */
export interface InFlightRun {
  messageId: string;
  runId: string;
}

/** A bulk redelivery job's progress (its workflow's query, and `GET /admin/redeliveries/:id`). */
export interface RedeliveryProgress {
  status: 'running' | 'completed' | 'failed';
  matched: number;
  started: number;
  finished: number;
  skipped: number;
  error?: string;
}
