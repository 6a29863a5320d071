import { status as grpcStatus } from '@grpc/grpc-js';
import { isGrpcServiceError, WorkflowNotFoundError, type Client, type WorkflowExecutionInfo } from '@temporalio/client';
import { executionInfoFromRaw } from '@temporalio/client/lib/helpers';
import type { Config } from '../config';
import { deliveryWorkflowId } from '../delivery/ids';
import type { DeliveryInput } from '../delivery/types';
import { inParallel } from '../in-parallel';
import type { Deliveries, DeliveryRow } from '../ports';
import type { Keyring } from '../privacy/keyring';
import { isIdentifierHash } from '../privacy/visible-ids';
import { DESTINATIONS, MESSAGE_TYPE, SOURCE, STATUS, USER_ID } from '../workflows/search-attributes';
import { DESTINATION_RESUMED, FLOW_CHANGED } from '../workflows/signals';
import { deliveryAttempts } from './delivery-history';
import { deliveryQuery, deliveryStatus, messageIdOf, UnsafeFilterError, userDeliveryQueries } from './delivery-query';
import { decodeListingCursor, encodeListingCursor, listingPhases, nextPosition, phaseQuery, type ListingPosition } from './delivery-listing';
import { historyItems, startedInput } from './history-events';
import { readRedeliveryJob, startRedeliveryJob } from './redelivery-jobs';
import { startDeliveryWorkflow, startRedeliveryWorkflow } from './start-delivery';
import { searchAttributeRefusal } from './connection';
import { oldestFirstPages, WakeJobs } from './wake-jobs';
import { taskQueueHealth } from './worker-health';
import { temporalForwardingJobs } from './forwarding-jobs';
import { temporalSourceFunctionRequests } from './source-function-requests';

const HEALTH_DEADLINE_MS = 3_000;

/**
 * A delivery workflow as the admin API lists it. With keys visibility holds only the userId's hash,
 * so the row shows the userId it knows from elsewhere: the filter that found it, or the
 * decoded input of a delivery's detail. A plaintext attribute (no keys, or a delivery started
 * before them) is shown as it is. No copy of the id is kept in Temporal for this (a memo would be
 * one that crypto-shredding cannot reach).
 */
function deliveryRow(execution: Pick<WorkflowExecutionInfo, 'workflowId' | 'runId' | 'startTime' | 'closeTime' | 'status' | 'typedSearchAttributes'>, knownUserId?: string): DeliveryRow {
  const sourceId = execution.typedSearchAttributes.get(SOURCE) ?? '';
  const attribute = execution.typedSearchAttributes.get(USER_ID);
  const userId = attribute === undefined ? undefined : isIdentifierHash(attribute) ? knownUserId : attribute;
  return {
    messageId: messageIdOf(execution.workflowId, sourceId),
    sourceId,
    type: execution.typedSearchAttributes.get(MESSAGE_TYPE) ?? '',
    ...(userId !== undefined && { userId }),
    status: deliveryStatus(execution.typedSearchAttributes.get(STATUS), execution.status.name),
    startedAt: execution.startTime.toISOString(),
    ...(execution.closeTime && { closedAt: execution.closeTime.toISOString() }),
    workflowId: execution.workflowId,
    runId: execution.runId,
  };
}

/**
 * `startConcurrency`: starts in flight at once for one request (INGEST_START_CONCURRENCY), enough to
 * hide round trips, few enough to be fair to other requests. `eagerStart`: see INGEST_EAGER_START.
 */
export interface DeliveriesOptions {
  taskQueue: string;
  startConcurrency: number;
  eagerStart?: boolean;
  /** Task queues /admin/status expects workers on (deliveries and Personas deliveries), and how recent a poll counts. */
  health: { taskQueues: string[]; pollerWindowMs: number };
  /** Hashes user and anonymous ids in visibility (attributes and queries); undefined with PAYLOAD_ENCRYPTION=off. */
  keyring: Keyring | undefined;
}

/** The options a process's configuration gives; `eagerStart` only where a worker shares the client's connection. */
export function deliveriesOptions(config: Pick<Config, 'temporalTaskQueue' | 'personasDeliveryTaskQueue' | 'ingestStartConcurrency' | 'healthPollerWindow'>, keyring: Keyring | undefined, eagerStart = false): DeliveriesOptions {
  return {
    keyring,
    taskQueue: config.temporalTaskQueue,
    startConcurrency: config.ingestStartConcurrency,
    eagerStart,
    health: { taskQueues: [config.temporalTaskQueue, config.personasDeliveryTaskQueue], pollerWindowMs: config.healthPollerWindow },
  };
}

/** Signals in flight at once when a destination's flow control changes (a resume sends one at a time). */
const FLOW_CHANGE_SIGNALS_AT_ONCE = 8;
/** Held deliveries read from visibility at a time when waking them: a page, not the backlog. */
const WAKE_PAGE_SIZE = 1_000;

export function temporalDeliveries(client: Client, { taskQueue, startConcurrency, eagerStart = false, health, keyring }: DeliveriesOptions): Deliveries {
  const forwardingJob = temporalForwardingJobs(client, taskQueue);
  const sourceFunctionRequest = temporalSourceFunctionRequests(client, taskQueue);
  const startOne = async (input: DeliveryInput, startDelayMs?: number) => void (await startDeliveryWorkflow(client, taskQueue, keyring, input, eagerStart, startDelayMs));

  async function stopMatching(query: string, reason: string): Promise<number> {
    let stopped = 0;
    for await (const execution of client.workflow.list({ query: `${query} AND ExecutionStatus = "Running"` })) {
      try {
        await client.workflow.getHandle(execution.workflowId, execution.runId).terminate(reason);
        stopped++;
      } catch (err) {
        // Closed since the list was read (visibility lags): nothing left to stop.
        if (!(err instanceof WorkflowNotFoundError)) throw err;
      }
    }
    return stopped;
  }

  async function deleteMatching(query: string): Promise<number> {
    let deleted = 0;
    // Any status: a running one (started while the regulation ran) is terminated by the delete itself.
    for await (const execution of client.workflow.list({ query })) {
      try {
        await client.workflowService.deleteWorkflowExecution({
          namespace: client.options.namespace,
          workflowExecution: { workflowId: execution.workflowId, runId: execution.runId },
        });
        deleted++;
      } catch (err) {
        // Already deleted (deletion is asynchronous, and the index may still list it).
        if (!isGrpcServiceError(err) || err.code !== grpcStatus.NOT_FOUND) throw err;
      }
    }
    return deleted;
  }

  const sumOver = (queries: string[], each: (query: string) => Promise<number>) => {
    let total = 0;
    return tracked(inParallel(queries, 4, async (query) => void (total += await each(query))).then(() => total));
  };

  // Calls the API stopped waiting for (a start past its deadline, between the client's retries) are
  // awaited before the connection closes: a retry timer firing on a closed channel throws.
  const underWay = new Set<Promise<unknown>>();
  const wakeJobs = new WakeJobs();
  function tracked<T>(call: Promise<T>): Promise<T> {
    underWay.add(call);
    void call.finally(() => underWay.delete(call)).catch(() => undefined);
    return call;
  }

  return {
    start: (inputs, deadline, options) => {
      const startAll = () => inParallel(inputs, startConcurrency, (input) => startOne(input, options?.startDelayMs));
      const withinDeadline = deadline === undefined ? startAll : () => client.withDeadline(deadline, startAll);
      // The abort cancels calls between their retries too (temporal/grpc-retry.ts), so once the
      // sender has heard 503 nothing of this request is left to outlive the connection.
      return tracked(options?.signal ? client.withAbortSignal(options.signal, withinDeadline) : withinDeadline());
    },
    async drain() {
      // A wake job is not a call anyone awaits an answer to; it is stopped, not waited out.
      await wakeJobs.stopAll();
      while (underWay.size > 0) await Promise.allSettled([...underWay]);
    },
    // One job per destination (a new change supersedes the one under way), reading the
    // running deliveries a page at a time, each page oldest first (visibility lists newest first),
    // so the held deliveries ask again (and take rate-limit slots) in that order.
    wakeHeld: (destinationId, why) =>
      wakeJobs.run(destinationId, (signal) =>
        client.withAbortSignal(signal, async () => {
          let woken = 0;
          const running = client.workflow.list({ query: `${DESTINATIONS.name} = ${JSON.stringify(destinationId)} AND ExecutionStatus = "Running"`, pageSize: WAKE_PAGE_SIZE });
          try {
            for await (const page of oldestFirstPages(running, WAKE_PAGE_SIZE)) {
              // A resume goes out one at a time, strictly oldest first. A flow change goes
              // out a few at once, still oldest first by the batch: its held deliveries ask again
              // under the new limit (or none) at once, and one signal at a time made a backlog wait.
              await inParallel(page, why === 'resumed' ? 1 : FLOW_CHANGE_SIGNALS_AT_ONCE, async (execution) => {
                if (signal.aborted) return;
                try {
                  await client.workflow.getHandle(execution.workflowId, execution.runId).signal(why === 'resumed' ? DESTINATION_RESUMED : FLOW_CHANGED, destinationId);
                  woken++;
                } catch (err) {
                  // Closed since the list was read (visibility lags): nothing left to wake.
                  if (!(err instanceof WorkflowNotFoundError)) throw err;
                }
              });
              if (signal.aborted) break;
            }
          } catch (err) {
            // Superseded by a newer change (or shut down): its job wakes the rest.
            if (!signal.aborted) throw err;
          }
          return woken;
        }),
      ),
    stopUsers: (ids, reason) => sumOver(userDeliveryQueries(ids, keyring), (query) => stopMatching(query, reason)),
    forgetUsers: (ids) => sumOver(userDeliveryQueries(ids, keyring), deleteMatching),
    async list({ limit, cursor, ...filter }) {
      let query: string;
      try {
        query = deliveryQuery(filter, keyring);
      } catch (err) {
        // The API validated every other filter by its shape; only a plaintext userId can be unquotable.
        if (err instanceof UnsafeFilterError && filter.userId !== undefined && keyring === undefined) return 'unsearchable_user_id';
        throw err;
      }
      const phases = listingPhases(filter.status);
      let position: ListingPosition | undefined = cursor === undefined ? { at: new Date().toISOString(), phase: phases[0] } : decodeListingCursor(cursor, query);
      if (position === undefined || !phases.includes(position.phase)) return 'invalid_cursor';
      const deliveries: DeliveryRow[] = [];
      // A page fills across sets, so a short page is always the last one.
      while (position !== undefined && deliveries.length < limit) {
        const { at, phase, token } = position;
        const response = await tracked(
          client.workflowService.listWorkflowExecutions({ namespace: client.options.namespace, query: phaseQuery(query, phase, at), pageSize: limit - deliveries.length, nextPageToken: token }),
        );
        const executions = await Promise.all(response.executions.map((raw) => executionInfoFromRaw(raw, client.options.loadedDataConverter, raw, client.options.namespace)));
        deliveries.push(...executions.map((execution) => deliveryRow(execution, filter.userId)));
        position = nextPosition(phases, at, phase, response.nextPageToken ?? undefined);
      }
      return { deliveries, ...(position && { nextCursor: encodeListingCursor(query, position) }) };
    },
    async count(filter) {
      const response = await tracked(client.workflowService.countWorkflowExecutions({ namespace: client.options.namespace, query: deliveryQuery(filter, keyring) }));
      return Number(response.count ?? 0);
    },
    async history(sourceId, messageId) {
      const workflowId = deliveryWorkflowId(sourceId, messageId);
      let description;
      try {
        description = await tracked(client.workflow.getHandle(workflowId).describe());
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return undefined;
        throw err;
      }
      const history = await tracked(client.workflow.getHandle(workflowId, description.runId).fetchHistory());
      // Through the client's codec: the admin API shows the operator decrypted bodies.
      const converter = client.options.loadedDataConverter;
      const input = await startedInput(history, converter);
      if (!input) return undefined;
      const visibleUserId = description.typedSearchAttributes.get(USER_ID);
      return { input, row: deliveryRow(description, input.userId), ...(visibleUserId !== undefined && { visibleUserId }), destinations: deliveryAttempts(input, await historyItems(history, converter)) };
    },
    redeliver: (input) => tracked(startRedeliveryWorkflow(client, taskQueue, keyring, input)),
    forward: (job, deadline) => tracked(forwardingJob(job, deadline)),
    runSourceFunction: (request, deadline) => tracked(sourceFunctionRequest(request, deadline)),
    startRedeliveryJob: (sourceId, filter) => tracked(startRedeliveryJob(client, taskQueue, sourceId, filter)),
    redeliveryJob: (id) => tracked(readRedeliveryJob(client, id)),
    async reachable() {
      try {
        await tracked(client.withDeadline(Date.now() + HEALTH_DEADLINE_MS, () => client.workflowService.describeNamespace({ namespace: client.options.namespace })));
        return true;
      } catch {
        return false;
      }
    },
    async health() {
      try {
        // A down server would otherwise be retried for half a minute; a probe wants an answer now.
        // Settled, not Promise.all: a first failure must not leave the other calls (and their
        // retries) running untracked, past the drain and the connection's close.
        const [attributes, ...answers] = await tracked(
          client.withDeadline(Date.now() + HEALTH_DEADLINE_MS, () =>
            Promise.allSettled([
              searchAttributeRefusal(client.connection.operatorService, client.options.namespace),
              ...health.taskQueues.map((name) => taskQueueHealth(client, name, health.pollerWindowMs, Date.now())),
            ]),
          ),
        );
        const taskQueues = answers.map((answer) => {
          if (answer.status === 'rejected') throw answer.reason;
          return answer.value;
        });
        if (attributes.status === 'rejected') throw attributes.reason;
        const refusal = attributes.value;
        const idle = taskQueues.filter((queue) => queue.workers === 0);
        const problems = [
          ...(refusal ? [`search attributes: ${refusal}`] : []),
          ...idle.map((queue) => `task queue ${queue.name}: no worker polled it within ${health.pollerWindowMs / 1000} s (HEALTH_POLLER_WINDOW); start a worker on it`),
        ];
        return { temporal: true, searchAttributes: !refusal, worker: idle.length === 0, taskQueues, problems };
      } catch (err) {
        return { temporal: false, searchAttributes: false, worker: false, taskQueues: [], problems: [`temporal: no answer within ${HEALTH_DEADLINE_MS / 1000} s (${(err as Error).message.split('\n')[0]})`] };
      }
    },
  };
}
