import { proxySinks, type Sinks } from '@temporalio/workflow';
import type { DeliveryInput } from '../../src/delivery/types';

export interface FloorSinks extends Sinks {
  floor: { seen(messageId: string): void };
}

const { floor } = proxySinks<FloorSinks>();

/**
 * Temporal's floor for one workflow per message: registered under Switchyard's workflow type and
 * started exactly as a delivery is (same id, input, search attributes, summary, timeout), it
 * completes in its first workflow task. A sink (no history event) tells the bench it ran.
 */
export async function deliverMessage(input: DeliveryInput): Promise<void> {
  floor.seen(input.messageId);
}
