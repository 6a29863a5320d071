import { temporal } from '@temporalio/proto';
import type { Client } from '@temporalio/client';
import { deliveryWorkflowId } from '../../src/delivery/ids';

const { EventType } = temporal.api.enums.v1;

/**
 * A delivery's history as its event types in order (`WORKFLOW_TASK_TIMED_OUT`, `MARKER_RECORDED`,
 * `ACTIVITY_TASK_SCHEDULED`, …): put in a failing assertion, it says from the CI output alone why a
 * message was sent twice (a workflow task run again, an attempt reported lost, a second run).
 */
export async function deliveryOutline(client: Client, sourceId: string, messageId: string): Promise<string> {
  const workflowId = deliveryWorkflowId(sourceId, messageId);
  const runs: string[] = [];
  for await (const run of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) runs.push(run.runId);
  const outlines = await Promise.all(
    (runs.length > 0 ? runs : [undefined]).map(async (runId) => {
      const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
      const events = (history.events ?? []).map((event) => String(EventType[event.eventType ?? 0]).replace(/^EVENT_TYPE_/, ''));
      return `run ${runId ?? '(latest)'}: ${events.join(', ')}`;
    }),
  );
  return outlines.join(' | ');
}
