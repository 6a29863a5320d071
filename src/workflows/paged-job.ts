import type { ActivityOptions, RetryPolicy } from '@temporalio/workflow';

/**
 * Activity options of the jobs that page through a set and start deliveries (bulk redelivery,
 * replays of the archive): retried for about 20 minutes, then the job ends failed and says why.
 */
export const PAGED_JOB_RETRY: RetryPolicy = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 20 };

/** A page heartbeats after every item: a worker that dies mid-page is noticed in seconds. */
export const PAGE_ACTIVITY: ActivityOptions = { startToCloseTimeout: '5m', heartbeatTimeout: '10s', retry: PAGED_JOB_RETRY };
