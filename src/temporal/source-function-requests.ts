import type { Client } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import { sourceFunctionWorkflowId, type SourceFunctionRequest } from '../messages/source-function-request';
import type { runSourceFunctionRequest } from '../workflows/source-function';

/**
 * Starts one source function request's workflow on the delivery task queue; resolves once Temporal
 * holds it (the webhook's 200 waits for that). `deadline`: the request's INGEST_START_TIMEOUT.
 */
export function temporalSourceFunctionRequests(client: Client, taskQueue: string): (request: SourceFunctionRequest, deadline: number) => Promise<void> {
  return async (request, deadline) => {
    await client.withDeadline(deadline, () =>
      client.workflow.start<typeof runSourceFunctionRequest>('runSourceFunctionRequest', {
        taskQueue,
        workflowId: sourceFunctionWorkflowId(request.sourceId, request.requestId),
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        args: [request],
        staticSummary: `source function request to ${request.sourceId}`,
      }),
    );
  };
}
