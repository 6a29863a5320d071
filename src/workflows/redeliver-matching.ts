import { ActivityFailure, continueAsNew, defineQuery, proxyActivities, setHandler, sleep, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { PAGE_ACTIVITY } from './paged-job';
import type { InFlightRun, RedeliveryJob, RedeliveryProgress } from '../delivery/redelivery-job';
import { backgroundTaskFinished } from './task-finished';

export type { RedeliveryProgress };

/**
 * A bulk redelivery job: every delivery of a source that matched the job's filter and had
 * closed when the job was made is delivered again, as a new run of its workflow id.
 *
 *   pages    → one activity per page of PAGE_SIZE matched runs starts their redeliveries; the job's
 *              state (cursor, counts, redeliveries in flight) lives in this workflow, so a worker
 *              crash resumes at the page it was on, and a retried page starts nothing twice
 *              (delivery/redelivery-job.ts decideRow)
 *   settle   → once every page is read (or MAX_IN_FLIGHT redeliveries are under way), the job asks
 *              which of its redeliveries have closed, with growing waits, until none is left
 *
 * It continues as new every PAGES_PER_RUN pages (or when Temporal suggests it), carrying its state.
 */

export interface RedeliveryState {
  cursor?: string;
  /** Every page has been read. */
  pagesDone: boolean;
  matched: number;
  started: number;
  finished: number;
  skipped: number;
  inFlight: InFlightRun[];
  runs: number;
}

export interface RedeliverMatchingInput {
  job: RedeliveryJob;
  /** Set when the job continued as new. */
  resume?: RedeliveryState;
}

export const redeliveryProgressQuery = defineQuery<RedeliveryProgress>('redeliveryProgress');

/** Matched runs per page activity. */
export const PAGE_SIZE = 100;
/** Redeliveries under way at once: the job starts no new page while this many have not closed. */
export const MAX_IN_FLIGHT = 500;
/** About five events per page or check: far below history limits. */
export const PAGES_PER_RUN = 50;
const CHECKS_PER_RUN = 200;
const FIRST_WAIT_MS = 1_000;
const LONGEST_WAIT_MS = 30_000;

const { redeliverPage, closedRedeliveries } = proxyActivities<Activities>(PAGE_ACTIVITY);

export async function redeliverMatching({ job, resume }: RedeliverMatchingInput): Promise<RedeliveryProgress> {
  const state: RedeliveryState = resume ?? { pagesDone: false, matched: 0, started: 0, finished: 0, skipped: 0, inFlight: [], runs: 1 };
  const progress = (status: RedeliveryProgress['status'], error?: string): RedeliveryProgress => ({
    status,
    matched: state.matched,
    started: state.started,
    finished: state.finished,
    skipped: state.skipped,
    ...(error !== undefined && { error }),
  });
  let ended: RedeliveryProgress | undefined;
  setHandler(redeliveryProgressQuery, () => ended ?? progress('running'));

  let pagesThisRun = 0;
  let checksThisRun = 0;
  let waitMs = FIRST_WAIT_MS;
  try {
    while (!state.pagesDone || state.inFlight.length > 0) {
      if (!state.pagesDone && state.inFlight.length + PAGE_SIZE <= MAX_IN_FLIGHT) {
        const page = await redeliverPage({ job, size: PAGE_SIZE, ...(state.cursor !== undefined && { cursor: state.cursor }) });
        state.matched += page.matched;
        state.started += page.started;
        state.skipped += page.skipped;
        state.inFlight.push(...page.inFlight);
        state.cursor = page.next;
        state.pagesDone = page.next === undefined;
        pagesThisRun++;
      } else {
        await sleep(waitMs);
        const closed = new Set(await closedRedeliveries({ sourceId: job.sourceId, runs: state.inFlight }));
        const before = state.inFlight.length;
        state.inFlight = state.inFlight.filter((run) => !closed.has(run.runId));
        state.finished += before - state.inFlight.length;
        waitMs = closed.size > 0 ? FIRST_WAIT_MS : Math.min(waitMs * 2, LONGEST_WAIT_MS);
        checksThisRun++;
      }
      const more = !state.pagesDone || state.inFlight.length > 0;
      if (more && (pagesThisRun >= PAGES_PER_RUN || checksThisRun >= CHECKS_PER_RUN || workflowInfo().continueAsNewSuggested)) {
        await continueAsNew<typeof redeliverMatching>({ job, resume: { ...state, runs: state.runs + 1 } });
      }
    }
  } catch (err) {
    // An activity out of retries (Temporal unreachable for minutes, a history it cannot read): the
    // job ends failed with what it had done, and says why.
    if (!(err instanceof ActivityFailure)) throw err;
    ended = progress('failed', err.cause?.message ?? err.message);
  }
  ended ??= progress('completed');
  await backgroundTaskFinished({ sourceId: job.sourceId, ...(job.filter.destinationId !== undefined && { destinationId: job.filter.destinationId }) }, { kind: 'redelivery', id: job.id, status: ended.status });
  return ended;
}
