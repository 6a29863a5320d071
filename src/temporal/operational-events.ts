import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import { BoundedMap } from '../bounded-map';
import { incidentId, subscribes, withNames } from '../delivery/operational-events';
import type { OperationalEvents } from '../ports';
import type { Store } from '../store/types';
import type { deliverOperationalEvent } from '../workflows/operational-event';

/** The operational lane's task queue: its own pollers and slots, so no destination's backlog holds an alert up. */
export const operationalTaskQueue = (deliveryTaskQueue: string): string => `${deliveryTaskQueue}-operational`;

/**
 * Incidents this process has started (or found started), by workflow id: a later raise of one is
 * answered here, with no store read and no start refused by Temporal. Most raises are such: every
 * message failing at a lane in a window raises its incident again. Bounded to this many ids (the
 * least recently raised goes; a raise of one forgotten asks Temporal again, which refuses it).
 */
const STARTED_INCIDENTS_KEPT = 10_000;

/**
 * Raises an event as one workflow on the operational lane, its id the incident's: a second raise
 * of the same incident (a retried activity, another worker seeing the same 410, another message
 * failing at the same lane in the same window) is refused by Temporal and sends nothing
 * (REJECT_DUPLICATE: not even after the first has closed). With no enabled endpoint subscribed to
 * its type, nothing is started at all.
 *
 * `windowMs` (OPERATIONAL_EVENT_WINDOW) cuts a message event's incident per lane and window
 * (delivery/operational-events.ts incidentId). The endpoints are the store's copy (`listCached`),
 * not a read of the table per raise. Its destination (its source for a task of a whole source) is
 * its Temporal fairness key, as a delivery's attempts in the slow lane: one destination's events
 * queued on the lane do not hold up another destination's turn.
 */
export function temporalOperationalEvents(client: Client, store: Pick<Store, 'operationalEndpoints' | 'sources' | 'destinations'>, taskQueue: string, options: { windowMs: number }): OperationalEvents {
  const started = new BoundedMap<string, true>(STARTED_INCIDENTS_KEPT);
  return {
    async raise(event, scope) {
      const workflowId = incidentId(event, { ...scope, windowMs: options.windowMs });
      if (started.get(workflowId)) return;
      const endpoints = (await store.operationalEndpoints.listCached()).filter((endpoint) => endpoint.enabled && subscribes(endpoint.eventTypes, event.type));
      if (endpoints.length === 0) return;
      const [source, destination] = await Promise.all([store.sources.get(event.data.sourceId), event.data.destinationId === undefined ? undefined : store.destinations.get(event.data.destinationId)]);
      // Names beside the ids, read when the event is raised, so an on-call person need not look them up.
      const named = withNames(event, { sourceName: source?.name, destinationName: destination?.name });
      try {
        await client.workflow.start<typeof deliverOperationalEvent>('deliverOperationalEvent', {
          taskQueue,
          workflowId,
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
          args: [{ event: named, endpointIds: endpoints.map((endpoint) => endpoint.id) }],
          staticSummary: `${event.type} for ${event.data.destinationId || event.data.sourceId}`,
          priority: { fairnessKey: event.data.destinationId || event.data.sourceId },
        });
      } catch (err) {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      }
      started.set(workflowId, true);
    },
  };
}
