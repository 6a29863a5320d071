import { Context, log } from '@temporalio/activity';
import { deliveryWorkflowId } from '../delivery/ids';
import { decideRow, type InFlightRun, type RedeliveryJob } from '../delivery/redelivery-job';
import type { DeliveryPolicy } from '../delivery/types';
import { inParallel } from '../in-parallel';
import { destinationRulesReader } from '../messages/destination-rules';
import { redeliveryPlanner } from '../messages/redelivery-plan';
import type { RedeliveryRuns } from '../ports';
import type { Store } from '../store/types';

/** Runs looked at (describe, history, start) at once within a page. */
const PAGE_CONCURRENCY = 8;

export interface RedeliveryPageResult {
  matched: number;
  started: number;
  skipped: number;
  /** The redeliveries of this page (started now, or found started by this job before a crash). */
  inFlight: InFlightRun[];
  /** Cursor of the next page; absent after the last. */
  next?: string;
}

/**
 * The bulk redelivery job's I/O. A page is safe to run again: decideRow finds the
 * redeliveries an earlier attempt of the same page started (their memo names the job and the run
 * they follow), so a retried page counts them and starts nothing twice.
 */
export function makeRedeliveryActivities(store: Store, policy: DeliveryPolicy, runs: RedeliveryRuns) {
  const planRedelivery = redeliveryPlanner(
    store,
    policy,
    destinationRulesReader(
      store.destinationFilters,
      (message, filterId) => {
        log.warn(message, { filterId });
      },
      store.transformations,
    ),
  );

  async function redeliverOne(job: RedeliveryJob, { messageId, workflowId, runId: matchedRunId }: { messageId: string; workflowId: string; runId: string }): Promise<InFlightRun | 'skipped'> {
    const latest = await runs.latest(workflowId);
    if (!latest) return 'skipped';
    const decision = decideRow(matchedRunId, latest, job.id);
    if (decision === 'started_by_this_job') return { messageId, runId: latest.runId };
    if (decision === 'skip') return 'skipped';
    const input = await runs.input(workflowId, matchedRunId);
    if (!input) return 'skipped';
    // The bodies as first sent, to the destinations it went to, through today's rules (the single redelivery's rule).
    const plan = await planRedelivery(job.sourceId, input);
    if (plan.status !== 'planned') return 'skipped';
    let planned = plan.input;
    const only = job.filter.destinationId;
    if (only !== undefined) {
      // Asked for one destination's failures: the others had their own outcome and get nothing again.
      if (!planned.destinationIds.includes(only)) return 'skipped';
      planned = { ...planned, destinationIds: [only], ...(planned.webhookLabels && { webhookLabels: { [only]: planned.webhookLabels[only] ?? [] } }) };
    }
    const started = await runs.redeliver({ ...planned, redelivery: { requestedAt: job.createdAt, previousRunId: matchedRunId, jobId: job.id } });
    // Someone else's run began between the look and the start: that one delivers it.
    return started === 'running' ? 'skipped' : { messageId, runId: started.runId };
  }

  return {
    /** One page of the job's snapshot: each matched run redelivered, found redelivered, or skipped. */
    async redeliverPage({ job, cursor, size }: { job: RedeliveryJob; cursor?: string; size: number }): Promise<RedeliveryPageResult> {
      const page = await runs.page(job, size, cursor);
      const result: RedeliveryPageResult = { matched: page.runs.length, started: 0, skipped: 0, inFlight: [], ...(page.next !== undefined && { next: page.next }) };
      await inParallel(page.runs, PAGE_CONCURRENCY, async (run) => {
        const outcome = await redeliverOne(job, run);
        if (outcome === 'skipped') result.skipped++;
        else {
          result.started++;
          result.inFlight.push(outcome);
        }
        Context.current().heartbeat();
      });
      return result;
    },

    /** Which of the job's redeliveries have closed (describe: strongly consistent, unlike visibility). */
    async closedRedeliveries({ sourceId, runs: inFlight }: { sourceId: string; runs: InFlightRun[] }): Promise<string[]> {
      const closed: string[] = [];
      await inParallel(inFlight, PAGE_CONCURRENCY, async ({ messageId, runId }) => {
        if (await runs.closed(deliveryWorkflowId(sourceId, messageId), runId)) closed.push(runId);
        Context.current().heartbeat();
      });
      return closed;
    },
  };
}
