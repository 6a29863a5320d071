import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import type { Deliveries } from '../api/deliveries';
import { deliveryWorkflowId } from '../delivery/ids';
import type { DeliveryInput } from '../delivery/types';
import { deliverMessage } from '../workflows';
import { DESTINATIONS, MESSAGE_TYPE, SOURCE, STATUS, USER_ID } from '../workflows/search-attributes';

const HEALTH_DEADLINE_MS = 3_000;

/**
 * Runs `run` on every item, `limit` at a time. After a failure no new item starts, and it rejects
 * only once every lane has stopped, so nothing keeps running behind its caller's back.
 */
export async function inParallel<T>(items: T[], limit: number, run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (!failed && next < items.length) {
      try {
        await run(items[next++]);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  });
  const rejected = (await Promise.allSettled(lanes)).find((lane): lane is PromiseRejectedResult => lane.status === 'rejected');
  if (rejected) throw rejected.reason;
}

/**
 * Starts one message's delivery workflow. Resolves false when Temporal already has it: a re-sent
 * messageId finds the existing workflow (running or closed) and is not delivered again.
 */
export async function startDeliveryWorkflow(client: Client, taskQueue: string, input: DeliveryInput, eager = false): Promise<boolean> {
  try {
    await client.workflow.start(deliverMessage, {
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

/**
 * `startConcurrency`: starts in flight at once for one request (INGEST_START_CONCURRENCY), enough to
 * hide round trips, few enough to be fair to other requests. `eagerStart`: see INGEST_EAGER_START.
 */
export function temporalDeliveries(client: Client, taskQueue: string, startConcurrency: number, eagerStart = false): Deliveries {
  const startOne = async (input: DeliveryInput) => void (await startDeliveryWorkflow(client, taskQueue, input, eagerStart));

  /** Visibility query string literal: quotes and backslashes escaped. */
  const literal = (value: string) => `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;

  async function forgetUser(userId: string): Promise<number> {
    // Running deliveries finish first; delete notifications stay as the record that the user was notified.
    const query = `${USER_ID.name} = ${literal(userId)} AND ${MESSAGE_TYPE.name} != "delete" AND ExecutionStatus != "Running"`;
    let deleted = 0;
    for await (const execution of client.workflow.list({ query })) {
      await client.workflowService.deleteWorkflowExecution({
        namespace: client.options.namespace,
        workflowExecution: { workflowId: execution.workflowId, runId: execution.runId },
      });
      deleted++;
    }
    return deleted;
  }

  // Calls the API stopped waiting for (a start past its deadline, between the client's retries) are
  // awaited before the connection closes: a retry timer firing on a closed channel throws.
  const underWay = new Set<Promise<unknown>>();
  function tracked<T>(call: Promise<T>): Promise<T> {
    underWay.add(call);
    void call.finally(() => underWay.delete(call)).catch(() => undefined);
    return call;
  }

  return {
    start: (inputs, deadline) => {
      const startAll = () => inParallel(inputs, startConcurrency, startOne);
      return tracked(deadline === undefined ? startAll() : client.withDeadline(deadline, startAll));
    },
    async drain() {
      while (underWay.size > 0) await Promise.allSettled([...underWay]);
    },
    forgetUsers(userIds) {
      let deleted = 0;
      return tracked(inParallel(userIds, 4, async (userId) => void (deleted += await forgetUser(userId))).then(() => deleted));
    },
    async health() {
      try {
        // A down server would otherwise be retried for half a minute; a probe wants an answer now.
        const { pollers } = await tracked(
          client.withDeadline(Date.now() + HEALTH_DEADLINE_MS, () =>
            client.workflowService.describeTaskQueue({
              namespace: client.options.namespace,
              // Type unspecified means the workflow task queue, which a polling worker always watches.
              taskQueue: { name: taskQueue },
            }),
          ),
        );
        return { temporal: true, worker: (pollers ?? []).length > 0 };
      } catch {
        return { temporal: false, worker: false };
      }
    },
  };
}
