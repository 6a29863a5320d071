import type { Client } from '@temporalio/client';
import type { DeliveryInput } from '../delivery/types';
import { inParallel } from '../in-parallel';
import type { Deliveries } from '../ports';
import { MESSAGE_TYPE, USER_ID } from '../workflows/search-attributes';
import { startDeliveryWorkflow } from './start-delivery';

const HEALTH_DEADLINE_MS = 3_000;

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
