import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import { forwardingJobId, type ForwardingJob } from '../messages/forwarding-job';
import type { forwardPlanCalls } from '../workflows/forward-plan-calls';

/**
 * Starts each forwarding job as a workflow on the delivery task queue, its id derived from the
 * page: the sender's retry of the same request finds it started and starts nothing. `deadline`:
 * the request's INGEST_START_TIMEOUT, as the origin's own starts have it.
 */
export function temporalForwardingJobs(client: Client, taskQueue: string): (job: ForwardingJob, deadline?: number) => Promise<void> {
  return async (job, deadline) => {
    const start = () =>
      client.workflow.start<typeof forwardPlanCalls>('forwardPlanCalls', {
        taskQueue,
        workflowId: forwardingJobId(job.targetSourceId, job.calls),
        // Once per page for as long as Temporal keeps its history, as an operational incident is.
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        args: [job],
        staticSummary: `forwarded calls of ${job.originSourceId} into ${job.targetSourceId}`,
      });
    try {
      await (deadline === undefined ? start() : client.withDeadline(deadline, start));
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  };
}
