import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import { deliveryWorkflowId } from '../delivery/ids';
import type { DeliveryInput } from '../delivery/types';
import type { deliverMessage } from '../workflows';
import { DESTINATIONS, MESSAGE_TYPE, SOURCE, STATUS, USER_ID } from '../workflows/search-attributes';

/**
 * Starts one message's delivery workflow. Resolves false when Temporal already has it: a re-sent
 * messageId finds the existing workflow (running or closed) and is not delivered again.
 */
export async function startDeliveryWorkflow(client: Client, taskQueue: string, input: DeliveryInput, eager = false): Promise<boolean> {
  try {
    // By type name: the client side never loads workflow code.
    await client.workflow.start<typeof deliverMessage>('deliverMessage', {
      taskQueue,
      // Needs a worker on `taskQueue` sharing the client's NativeConnection; Temporal falls back to
      // the task queue when that worker has no free slot.
      requestEagerStart: eager,
      workflowId: deliveryWorkflowId(input.sourceId, input.messageId),
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      args: [input],
      typedSearchAttributes: [
        { key: SOURCE, value: input.sourceId },
        { key: DESTINATIONS, value: input.destinationIds },
        { key: MESSAGE_TYPE, value: input.type },
        ...(input.userId ? [{ key: USER_ID, value: input.userId }] : []),
        { key: STATUS, value: 'delivering' },
      ],
    });
    return true;
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw err;
  }
}
