import { proxyLocalActivities } from '@temporalio/workflow';
import type { DeliveryInput } from '../../src/delivery/types';
import type { DesignFloorActivities } from './design-activities';

const { seen } = proxyLocalActivities<DesignFloorActivities>({ startToCloseTimeout: '10s' });

/**
 * The design floor: the least a workflow that calls an activity can cost. Registered
 * under Switchyard's workflow type and started exactly as a delivery is, it runs one local activity
 * that does nothing but say it ran, so it pays what a delivery's first attempt pays in Temporal's
 * machinery (a local-activity marker, a second activation for its result) and none of the attempt.
 */
export async function deliverMessage(input: DeliveryInput): Promise<void> {
  await seen(input.messageId);
}
