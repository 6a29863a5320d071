import { messageBody, type Message } from '../delivery/payload';
import { webhookLabel } from '../delivery/summary';
import type { DeliveryInput, DeliveryPolicy, MessageBody, MessageType, SealedBody } from '../delivery/types';
import type { Store } from '../store/types';

/**
 * A message on its way out: its id, the type and user its workflow is searched by, and the body
 * POSTed: in the clear (`body`) or sealed under its subject's data key (`sealedBody`, with the
 * keyed hashes its workflow is searched by in place of the ids: see DeliveryInput.visibleIds).
 */
export interface Outgoing {
  messageId: string;
  type: MessageType;
  userId?: string;
  visibleIds?: DeliveryInput['visibleIds'];
  body?: MessageBody;
  sealedBody?: SealedBody;
}

export const outgoing = (message: Message): Outgoing => ({ messageId: message.messageId, type: message.type, userId: message.userId, body: messageBody(message) });

/** A recorded delivery input as it goes out again (a redelivery): its body as it is, sealed or not, never re-sealed. */
export const outgoingAgain = (input: DeliveryInput): Outgoing => ({
  messageId: input.messageId,
  type: input.type,
  userId: input.userId,
  visibleIds: input.visibleIds,
  body: input.message,
  sealedBody: input.sealedMessage,
});

/** A step that seals bodies before their inputs are made (seal-bodies.ts). */
export type SealBodies = (messages: Outgoing[]) => Promise<Outgoing[]>;

export type DeliveryPlan = { status: 'no_destinations' } | { status: 'planned'; inputs: DeliveryInput[] };

export type PlanDeliveries = (sourceId: string, messages: Outgoing[]) => Promise<DeliveryPlan>;

/**
 * The one place a delivery workflow's input is made, for ingested calls, delete notifications,
 * redeliveries and Personas syncs alike: the source's destinations enabled now (each attempt checks
 * again at send time), and the delivery policy fixed for the message's whole life. With `seal`
 * (new data, with payload keys), bodies with a subject are sealed first (crypto-shredding).
 */
export function deliveryPlanner(destinations: Pick<Store['destinations'], 'listEnabled'>, policy: DeliveryPolicy, seal?: SealBodies): PlanDeliveries {
  return async (sourceId, messages) => {
    const enabled = await destinations.listEnabled(sourceId);
    if (enabled.length === 0) return { status: 'no_destinations' };
    const destinationIds = enabled.map((destination) => destination.id);
    const webhookLabels = Object.fromEntries(enabled.map((destination) => [destination.id, destination.webhookUrls.map(webhookLabel)]));
    const ready = seal ? await seal(messages) : messages;
    const inputs = ready.map(
      ({ messageId, type, userId, visibleIds, body, sealedBody }): DeliveryInput => ({
        sourceId,
        messageId,
        type,
        userId,
        ...(visibleIds !== undefined && { visibleIds }),
        destinationIds,
        ...(sealedBody ? { sealedMessage: sealedBody } : { message: body }),
        policy,
        webhookLabels,
      }),
    );
    return { status: 'planned', inputs };
  };
}
