import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { OperationalEvent } from '../delivery/operational-events';

export interface OperationalEventInput {
  event: OperationalEvent;
  /** The endpoints subscribed when it was raised; each is read again at send time (a deleted or disabled one is skipped). */
  endpointIds: string[];
}

/**
 * The operational lane's own retries, apart from any destination's retry window, hold or
 * rate limit: about three hours of growing waits, then the endpoint's send fails in history.
 */
const { sendOperationalEvent } = proxyActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '5s', backoffCoefficient: 2, maximumInterval: '10m', maximumAttempts: 20, nonRetryableErrorTypes: ['OperationalEndpointRefused'] },
});

/** One operational event to each endpoint subscribed to it, in parallel; one endpoint's failure does not hold up another's. */
export async function deliverOperationalEvent(input: OperationalEventInput): Promise<void> {
  const eventId = workflowInfo().workflowId;
  await Promise.allSettled(input.endpointIds.map((endpointId) => sendOperationalEvent({ endpointId, event: input.event, eventId })));
}
