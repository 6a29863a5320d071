import { randomBytes } from 'node:crypto';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { redeliveryJobWorkflowId, type RedeliveryFilter, type RedeliveryJob, type RedeliveryMemo } from '../delivery/redelivery-job';
import type { RedeliveryJobView, RedeliveryRuns } from '../ports';
import type { Keyring } from '../privacy/keyring';
import type { redeliverMatching, RedeliveryProgress } from '../workflows/redeliver-matching';
import { decodeCursor, encodeCursor, messageIdOf, redeliverySnapshotQuery } from './delivery-query';
import { startedInput } from './history-events';
import { startRedeliveryWorkflow } from './start-delivery';

/** Bulk redelivery jobs on Temporal: the API's side (start, read) and the worker's (RedeliveryRuns). */

/** Starts the job's workflow; its definition is also its memo, so a job reads back without a worker. */
export async function startRedeliveryJob(client: Client, taskQueue: string, sourceId: string, filter: RedeliveryFilter): Promise<{ id: string }> {
  const job: RedeliveryJob = { id: `rdl_${randomBytes(16).toString('hex')}`, sourceId, filter, createdAt: new Date().toISOString() };
  await client.workflow.start<typeof redeliverMatching>('redeliverMatching', {
    taskQueue,
    workflowId: redeliveryJobWorkflowId(job.id),
    args: [{ job }],
    memo: { job },
    staticSummary: `redeliver ${filter.status} deliveries of ${sourceId}${filter.destinationId ? ` to ${filter.destinationId}` : ''}, started ${filter.since} – ${filter.until}`,
  });
  return { id: job.id };
}

/** workflows/redeliver-matching.ts redeliveryProgressQuery, by name: the API never loads workflow code. */
const PROGRESS_QUERY = 'redeliveryProgress';

const NO_PROGRESS: Omit<RedeliveryProgress, 'status'> = { matched: 0, started: 0, finished: 0, skipped: 0 };

/**
 * The job as the API shows it. Running: its progress query (answered by a worker). Completed: its
 * result. Ended otherwise (terminated, failed): failed, with the counts the query can still replay.
 */
export async function readRedeliveryJob(client: Client, id: string): Promise<RedeliveryJobView | undefined> {
  const handle = client.workflow.getHandle<typeof redeliverMatching>(redeliveryJobWorkflowId(id));
  let description;
  try {
    description = await handle.describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  }
  const job = (description.memo as { job?: RedeliveryJob } | undefined)?.job;
  if (!job) return undefined;
  let progress: RedeliveryProgress;
  switch (description.status.name) {
    case 'RUNNING':
    case 'CONTINUED_AS_NEW':
      progress = await handle.query<RedeliveryProgress>(PROGRESS_QUERY);
      break;
    case 'COMPLETED':
      progress = await handle.result();
      break;
    default:
      progress = { ...(await handle.query<RedeliveryProgress>(PROGRESS_QUERY).catch(() => NO_PROGRESS)), status: 'failed', error: `the job's workflow ended ${description.status.name.toLowerCase()}` };
  }
  return { ...job, ...progress };
}

/** The worker's side of a job: visibility pages, describe, history and the single redelivery's start. */
export function temporalRedeliveryRuns(client: Client, taskQueue: string, keyring: Keyring | undefined): RedeliveryRuns {
  return {
    async page(job, size, cursor) {
      const query = redeliverySnapshotQuery(job);
      const nextPageToken = cursor === undefined ? undefined : decodeCursor(cursor, query);
      if (cursor !== undefined && nextPageToken === undefined) throw new Error('redelivery job cursor does not belong to its query');
      const response = await client.workflowService.listWorkflowExecutions({ namespace: client.options.namespace, query, pageSize: size, nextPageToken });
      const token = response.nextPageToken;
      return {
        runs: response.executions.map(({ execution }) => ({ messageId: messageIdOf(execution!.workflowId!, job.sourceId), workflowId: execution!.workflowId!, runId: execution!.runId! })),
        ...(token && token.length > 0 && { next: encodeCursor(query, token) }),
      };
    },
    async latest(workflowId) {
      try {
        const description = await client.workflow.getHandle(workflowId).describe();
        const memo = (description.memo ?? {}) as RedeliveryMemo;
        return { runId: description.runId, ...(memo.redeliveryJob && { redeliveryJob: memo.redeliveryJob }), ...(memo.previousRunId && { previousRunId: memo.previousRunId }) };
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return undefined;
        throw err;
      }
    },
    async input(workflowId, runId) {
      try {
        const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
        return await startedInput(history, client.options.loadedDataConverter);
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return undefined;
        throw err;
      }
    },
    redeliver: (input) => startRedeliveryWorkflow(client, taskQueue, keyring, input),
    async closed(workflowId, runId) {
      try {
        return (await client.workflow.getHandle(workflowId, runId).describe()).status.name !== 'RUNNING';
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return true;
        throw err;
      }
    },
  };
}
