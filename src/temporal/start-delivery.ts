import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import { outcomeEntries } from '../delivery/destination-outcomes';
import { deliveryWorkflowId } from '../delivery/ids';
import { REPLAY_PRIORITY, replayDeliveryWorkflowId } from '../delivery/replay';
import type { RedeliveryMemo } from '../delivery/redelivery-job';
import { executionTimeoutMs } from '../delivery/retry-window';
import { deliveryDetails, deliverySummary } from '../delivery/summary';
import type { DeliveryInput } from '../delivery/types';
import type { Keyring } from '../privacy/keyring';
import { visibleId } from '../privacy/visible-ids';
import type { deliverMessage } from '../workflows';
import { ANONYMOUS_ID, DESTINATIONS, MESSAGE_TYPE, OUTCOMES, SOURCE, STATUS, USER_ID } from '../workflows/search-attributes';

/**
 * Starts one message's delivery workflow. Resolves false when Temporal already has it: a re-sent
 * messageId finds the existing workflow, running or delivered, and is not delivered again. A
 * delivery that failed (or timed out) is started afresh, so a sender re-sending a message that
 * could not be delivered (the receiver was broken) gets it delivered once the receiver works.
 */
export async function startDeliveryWorkflow(client: Client, taskQueue: string, keyring: Keyring | undefined, input: DeliveryInput, eager = false, startDelayMs?: number): Promise<boolean> {
  return (await start(client, taskQueue, keyring, input, eager, startDelayMs)) !== undefined;
}

/**
 * Starts a redelivery (input.redelivery set): a new run of the message's workflow id, even after a
 * delivered run, since an operator asked for it. Resolves 'running' while a run is under way.
 */
export async function startRedeliveryWorkflow(client: Client, taskQueue: string, keyring: Keyring | undefined, input: DeliveryInput): Promise<{ workflowId: string; runId: string } | 'running'> {
  if (!input.redelivery) throw new Error('startRedeliveryWorkflow needs input.redelivery');
  const runId = await start(client, taskQueue, keyring, input, false);
  return runId === undefined ? 'running' : { workflowId: deliveryWorkflowId(input.sourceId, input.messageId), runId };
}

/** Starts a replayed message's delivery (input.replay set) under its own id; false when the replay started it before. */
export async function startReplayDeliveryWorkflow(client: Client, taskQueue: string, keyring: Keyring | undefined, input: DeliveryInput): Promise<boolean> {
  if (!input.replay) throw new Error('startReplayDeliveryWorkflow needs input.replay');
  return (await start(client, taskQueue, keyring, input, false)) !== undefined;
}

/** What a recovered delivery's memo says: the blocked-only replay that started it. */
export interface RecoveryMemo {
  recoveredBy: string;
}

/**
 * A message the tracking plan blocked at ingest, recovered by a blocked-only
 * replay, starts the delivery it would have had: its own workflow id, the live reuse policy (a
 * delivered or running one is never started twice; a failed one may be), the replay's header and
 * priority. true when this replay started it, now or on an earlier try of the page (its memo names
 * the replay); false when it existed otherwise.
 */
export async function startRecoveredDeliveryWorkflow(client: Client, taskQueue: string, keyring: Keyring | undefined, input: DeliveryInput & { replay: { id: string } }): Promise<boolean> {
  if ((await start(client, taskQueue, keyring, input, false, undefined, true)) !== undefined) return true;
  const description = await client.workflow.getHandle(deliveryWorkflowId(input.sourceId, input.messageId)).describe();
  return (description.memo as Partial<RecoveryMemo> | undefined)?.recoveredBy === input.replay.id;
}

/** The new run's id; undefined when Temporal already has the workflow (reuse policy) or it is running. */
async function start(client: Client, taskQueue: string, keyring: Keyring | undefined, input: DeliveryInput, eager: boolean, startDelayMs?: number, recovered = false): Promise<string | undefined> {
  const anonymousId = typeof input.message?.anonymousId === 'string' ? input.message.anonymousId : undefined;
  // A sealed input carries the hashes already (visibleIds); a plaintext one its ids.
  const userIdAttribute = input.visibleIds?.userId ?? (input.userId ? visibleId(keyring, 'userId', input.userId) : undefined);
  const anonymousIdAttribute = input.visibleIds?.anonymousId ?? (anonymousId ? visibleId(keyring, 'anonymousId', anonymousId) : undefined);
  try {
    // By type name: the client side never loads workflow code.
    const handle = await client.workflow.start<typeof deliverMessage>('deliverMessage', {
      taskQueue,
      // Needs a worker on `taskQueue` sharing the client's NativeConnection; Temporal falls back to
      // the task queue when that worker has no free slot.
      // A delayed start has no first task to hand back eagerly.
      requestEagerStart: eager && startDelayMs === undefined,
      ...(startDelayMs !== undefined ? { startDelay: startDelayMs } : {}),
      workflowId: input.replay && !recovered ? replayDeliveryWorkflowId(input.replay.id, input.messageId) : deliveryWorkflowId(input.sourceId, input.messageId),
      // The retry window is a hard deadline: past it and a short grace Temporal ends the delivery
      // even if no worker came back to do it (delivery/retry-window.ts).
      workflowExecutionTimeout: executionTimeoutMs(input.policy, startDelayMs),
      // Failed, timed out, cancelled or terminated runs only; a completed run (delivered, or stopped
      // because the destination was switched off) keeps the id, and a running one rejects the start.
      // A redelivery is an operator's explicit request: any closed run may be followed by a new one.
      // A replay's delivery is started once, whatever happened to it: a page run again never sends twice.
      // A recovered message's delivery is its own, under the live policy.
      workflowIdReusePolicy:
        input.replay && !recovered ? WorkflowIdReusePolicy.REJECT_DUPLICATE : input.redelivery ? WorkflowIdReusePolicy.ALLOW_DUPLICATE : WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
      args: [input],
      // A replay's deliveries wait behind live ones on the same task queue (their activities inherit it).
      priority: { fairnessKey: input.sourceId, ...(input.replay && { priorityKey: REPLAY_PRIORITY }) },
      // What the Web UI's workflow list and page say without opening the input (delivery/summary.ts).
      staticSummary: deliverySummary(input),
      staticDetails: deliveryDetails(input),
      // Read back by describe (strongly consistent, unlike visibility): a bulk job retried after a
      // crash recognises the runs it already started (delivery/redelivery-job.ts decideRow).
      ...(input.redelivery && { memo: { previousRunId: input.redelivery.previousRunId, ...(input.redelivery.jobId && { redeliveryJob: input.redelivery.jobId }) } satisfies RedeliveryMemo }),
      ...(recovered && input.replay && { memo: { recoveredBy: input.replay.id } satisfies RecoveryMemo }),
      typedSearchAttributes: [
        { key: SOURCE, value: input.sourceId },
        { key: DESTINATIONS, value: input.destinationIds },
        { key: MESSAGE_TYPE, value: input.type },
        // Keyed hashes: visibility is readable by whoever operates Temporal, and the
        // admin API and regulations search by hashing their query the same way.
        ...(userIdAttribute ? [{ key: USER_ID, value: userIdAttribute }] : []),
        ...(anonymousIdAttribute ? [{ key: ANONYMOUS_ID, value: anonymousIdAttribute }] : []),
        { key: STATUS, value: 'delivering' },
        // Every destination `retrying` until the workflow records its own outcome.
        { key: OUTCOMES, value: outcomeEntries(input.destinationIds, new Map(), input.replay !== undefined) },
      ],
    });
    return handle.firstExecutionRunId;
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return undefined;
    throw err;
  }
}
