import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

/**
 * A workflow's history read back for its stage times (bench/stages.ts): I/O apart from the pure
 * stage arithmetic, whose tests then load no Temporal protos.
 */
const { EventType } = temporal.api.enums.v1;

/** The start and first-task times of a workflow, from its history. */
export async function workflowTimes(client: Client, workflowId: string): Promise<{ startedAt: number; firstTaskAt: number } | undefined> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const at = (type: temporal.api.enums.v1.EventType) => {
    const event = history.events?.find((e) => e.eventType === type);
    return event?.eventTime ? Number(event.eventTime.seconds) * 1000 + (event.eventTime.nanos ?? 0) / 1e6 : undefined;
  };
  const startedAt = at(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED);
  const firstTaskAt = at(EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED);
  return startedAt === undefined || firstTaskAt === undefined ? undefined : { startedAt, firstTaskAt };
}
