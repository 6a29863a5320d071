/**
 * The slow lane (no noisy neighbours): an attempt whose webhook is busy (this worker's
 * WORKER_MAX_IN_FLIGHT_PER_WEBHOOK attempts to it already in flight, as with a receiver that hangs
 * until the timeout) is made again on a task queue of its own. There it waits as one queued task
 * in Temporal, then in a worker for the webhook's room, instead of asking again and again through
 * the delivery task queue: a backlog of thousands of messages to a hanging receiver then costs
 * Temporal one task per attempt, and the other destinations' deliveries do not queue behind a
 * stream of busy answers. Each slow-lane task carries its destination as Temporal fairness key,
 * so one destination's backlog does not hold up another's turn in the lane either. Pure: the
 * workflow imports it.
 */

const SUFFIX = '-slow-lane';

/** The slow lane of a delivery task queue (each delivery queue has its own, polled by the same workers). */
export function slowLaneTaskQueue(deliveryTaskQueue: string): string {
  return `${deliveryTaskQueue}${SUFFIX}`;
}

export function isSlowLane(taskQueue: string): boolean {
  return taskQueue.endsWith(SUFFIX);
}

/**
 * Start-to-close of a slow-lane attempt: it may wait up to one delivery timeout for the webhook's
 * room (the attempts holding it end within theirs), then sends with one timeout of its own.
 */
export function slowLaneAttemptTimeoutMs(deliveryTimeoutMs: number, graceMs: number): number {
  return 2 * deliveryTimeoutMs + graceMs;
}
