import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { ForwardingJob } from '../messages/forwarding-job';

/**
 * A forwarding job's retries: the target's ingestion is tried until it takes the page (growing
 * waits, up to 10 minutes apart, for as long as a week), so a target that fails for a while loses
 * nothing and never answers the origin's sender. Refusals of the calls themselves are not retried.
 */
const { forwardCalls } = proxyActivities<Activities>({
  startToCloseTimeout: '1m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10m' },
  scheduleToCloseTimeout: '7d',
});

/** One page of a tracking plan's forwarded calls, ingested into the target source (messages/forwarding-job.ts). */
export async function forwardPlanCalls(job: ForwardingJob): Promise<void> {
  await forwardCalls(job);
}
