import { deliveryPolicy } from '../../src/config';
import { startDeliveryWorkflow } from '../../src/temporal/start-delivery';
import type { TestSystem } from './system';

/**
 * Starts the delivery of a track by `userId` accepted at `acceptedAt` to the source's enabled
 * destinations, now: what a call accepted just before a regulation looks like when its workflow
 * start lands after it, so only the send-time check stands between it and the receiver.
 */
export async function startLateDelivery(system: TestSystem, sourceId: string, userId: string, messageId: string, acceptedAt: string): Promise<void> {
  await startDeliveryWorkflow(system.client, system.config.temporalTaskQueue, system.keyring, {
    sourceId,
    messageId,
    type: 'track',
    userId,
    destinationIds: await system.store.destinations.listEnabledIds(sourceId),
    message: { version: 1, type: 'track', messageId, userId, timestamp: acceptedAt, receivedAt: acceptedAt, context: {}, event: 'Late', properties: {} },
    policy: deliveryPolicy(system.config),
  });
}
