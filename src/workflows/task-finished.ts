import { log, patched, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { OperationalEventData } from '../delivery/operational-events';

/**
 * A replay or bulk redelivery job that ends raises `background_task.finished` (an
 * activity: a command the histories recorded before it do not have, hence the patch, asked only at
 * the job's end).
 */
const TASK_FINISHED_PATCH = 'background-task-finished-event';

const { raiseOperationalEvent } = proxyActivities<Activities>({ startToCloseTimeout: '30s', retry: { initialInterval: '1s', maximumInterval: '1m', maximumAttempts: 10 } });

export async function backgroundTaskFinished(where: Pick<OperationalEventData, 'sourceId' | 'destinationId'>, task: NonNullable<OperationalEventData['task']>): Promise<void> {
  if (!patched(TASK_FINISHED_PATCH)) return;
  try {
    await raiseOperationalEvent({ type: 'background_task.finished', timestamp: new Date(Date.now()).toISOString(), data: { ...where, task } }, {});
  } catch (err) {
    // The job's own status is what its API answers; an event that cannot be raised does not change it.
    log.warn('background_task.finished not raised', { task: task.id, error: (err as Error).message });
  }
}
