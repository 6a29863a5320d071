import { isGrpcDeadlineError, WorkflowNotFoundError, WorkflowUpdateRPCTimeoutOrCancelledError, type Client } from '@temporalio/client';
import { deliveryWorkflowId } from '../delivery/ids';
import { REPLAY_PRIORITY, replayDeliveryWorkflowId, replayWorkflowId } from '../delivery/replay';
import { ReplayChangeUnanswered, type ReplayChange, type ReplayDeliveries, type Replays } from '../ports';
import type { Keyring } from '../privacy/keyring';
import type { replayArchive } from '../workflows/replay-archive';
import { STATUS } from '../workflows/search-attributes';
import { deliveryStatus } from './delivery-query';
import { startRecoveredDeliveryWorkflow, startReplayDeliveryWorkflow } from './start-delivery';

/** Replays on Temporal: the API's side (start, pause, resume, cancel) and the worker's (ReplayDeliveries). */

/** workflows/replay-archive.ts's Updates, by name: the API never loads workflow code. */
const UPDATES: Record<ReplayChange, string> = { pause: 'pauseReplay', resume: 'resumeReplay', cancel: 'cancelReplay' };

/**
 * How long a pause, resume or cancel waits for the workflow's answer. A paced page under way holds
 * the answer for about a second; past this the API answers 503 instead of holding the request (and
 * the portal's button) until a worker comes back.
 */
export const REPLAY_CHANGE_DEADLINE_MS = 15_000;

export function temporalReplays(client: Client, taskQueue: string, changeDeadlineMs = REPLAY_CHANGE_DEADLINE_MS): Replays {
  return {
    async start(plan) {
      await client.workflow.start<typeof replayArchive>('replayArchive', {
        taskQueue,
        workflowId: replayWorkflowId(plan.id),
        args: [{ replay: plan }],
        // Its own tasks wait behind live deliveries' too.
        priority: { fairnessKey: plan.sourceId, priorityKey: REPLAY_PRIORITY },
        staticSummary: `${plan.dryRun ? 'dry run: ' : ''}${plan.blockedOnly ? 'blocked-only replay' : 'replay'} ${plan.sourceId} → ${plan.destinationId ?? 'every enabled destination'}, received ${plan.since} – ${plan.until}${plan.trigger ? ` where ${plan.trigger}` : ''}`,
      });
    },
    async change(id, change) {
      try {
        await client.withDeadline(Date.now() + changeDeadlineMs, () => client.workflow.getHandle(replayWorkflowId(id)).executeUpdate(UPDATES[change]));
      } catch (err) {
        if (isGrpcDeadlineError(err) || err instanceof WorkflowUpdateRPCTimeoutOrCancelledError) throw new ReplayChangeUnanswered(change, changeDeadlineMs);
        throw err;
      }
    },
  };
}

/** The worker's side: a replayed message's delivery started once, and how it ended. */
export function temporalReplayDeliveries(client: Client, taskQueue: string, keyring: Keyring | undefined): ReplayDeliveries {
  return {
    start: (input) => startReplayDeliveryWorkflow(client, taskQueue, keyring, input),
    recover: (input) => startRecoveredDeliveryWorkflow(client, taskQueue, keyring, input),
    async outcome(replayId, messageId, recoveredFrom) {
      try {
        const workflowId = recoveredFrom === undefined ? replayDeliveryWorkflowId(replayId, messageId) : deliveryWorkflowId(recoveredFrom, messageId);
        const description = await client.workflow.getHandle(workflowId).describe();
        if (description.status.name === 'RUNNING') return 'running';
        return deliveryStatus(description.typedSearchAttributes.get(STATUS), description.status.name) === 'delivered' ? 'delivered' : 'failed';
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return 'gone';
        throw err;
      }
    },
  };
}
