import { messageBody, type Message } from '../delivery/payload';
import { webhookLabel } from '../delivery/summary';
import type { DeliveryInput, DeliveryPolicy, MessageBody, MessageType } from '../delivery/types';
import type { Store } from '../store/types';

/** A message on its way out: its id, the type and user its workflow is searched by, and the body POSTed. */
export interface Outgoing {
  messageId: string;
  type: MessageType;
  userId?: string;
  body: MessageBody;
}

export const outgoing = (message: Message): Outgoing => ({ messageId: message.messageId, type: message.type, userId: message.userId, body: messageBody(message) });

export type DeliveryPlan = { status: 'no_destinations' } | { status: 'planned'; inputs: DeliveryInput[] };

export type PlanDeliveries = (sourceId: string, messages: Outgoing[]) => Promise<DeliveryPlan>;

/**
 * The one place a delivery workflow's input is made, for ingested calls, delete notifications and
 * Personas syncs alike: the source's destinations enabled now (each attempt checks again at send
 * time), and the delivery policy fixed for the message's whole life.
 */
export function deliveryPlanner(destinations: Pick<Store['destinations'], 'listEnabled'>, policy: DeliveryPolicy): PlanDeliveries {
  return async (sourceId, messages) => {
    const enabled = await destinations.listEnabled(sourceId);
    if (enabled.length === 0) return { status: 'no_destinations' };
    const destinationIds = enabled.map((destination) => destination.id);
    const webhookLabels = Object.fromEntries(enabled.map((destination) => [destination.id, destination.webhookUrls.map(webhookLabel)]));
    const inputs = messages.map(({ messageId, type, userId, body }): DeliveryInput => ({ sourceId, messageId, type, userId, destinationIds, message: body, policy, webhookLabels }));
    return { status: 'planned', inputs };
  };
}
