import type { Client } from '@temporalio/client';
import type { TaskQueueHealth } from '../ports';

/**
 * Whether workers poll each task queue, from the pollers Temporal's matching service remembers
 * (`lastAccessTime` is the start of a poller's latest long poll). A live idle worker starts a new
 * long poll at least every `matching.longPollExpirationInterval` (60 s by default), so a poller not
 * seen for `pollerWindowMs` (HEALTH_POLLER_WINDOW, 70 s) belongs to a worker that died: Temporal
 * itself keeps listing such pollers for minutes.
 */
export async function taskQueueHealth(client: Client, taskQueue: string, pollerWindowMs: number, nowMs: number): Promise<TaskQueueHealth> {
  const { pollers } = await client.workflowService.describeTaskQueue({
    namespace: client.options.namespace,
    // Type unspecified means the workflow task queue, which a polling worker always watches.
    taskQueue: { name: taskQueue },
  });
  const lastSeen = (pollers ?? []).map((poller) => {
    const at = poller.lastAccessTime;
    return at ? Number(at.seconds ?? 0) * 1000 + Math.floor((at.nanos ?? 0) / 1e6) : 0;
  });
  const live = lastSeen.filter((at) => nowMs - at <= pollerWindowMs);
  const latest = Math.max(0, ...lastSeen);
  return {
    name: taskQueue,
    workers: live.length,
    ...(latest > 0 ? { lastPollAt: new Date(latest).toISOString() } : {}),
  };
}
