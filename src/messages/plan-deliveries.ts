import { messageBody, type Message } from '../delivery/payload';
import { pipelineEvent } from '../delivery/pipeline-event';
import { webhookLabel } from '../delivery/summary';
import type { DeliveryInput, DeliveryPolicy, MessageBody, MessageType } from '../delivery/types';
import type { TraceCarrier } from '../tracing/trace-carrier';
import { decideDelivery, type DeliveryDecision, type DeliveryDecisionInput } from '../rules/delivery-decision';
import type { EnabledDestination, Store } from '../store/types';
import type { DecisionRecorder } from './message-count-recorder';
import { triggersOf, type DestinationTriggers } from './mapping-plan';
import type { DataKeyReads } from './request-data-keys';
import type { StopReason } from '../delivery/stop-reasons';
import { inputBodies, OPEN, type ChooseSeals } from './seal-bodies';

/**
 * A message on its way out: its id, the type and user its workflow is searched by, and the body as
 * the call gave it (the decision makes each destination's from it; seal-bodies.ts seals them all
 * under the call's seal, chosen from this body before any destination's rules).
 */
export interface Outgoing {
  messageId: string;
  type: MessageType;
  userId?: string;
  body?: MessageBody;
  /**
   * Present for what the rules decide per destination (ingested calls, Personas syncs,
   * redeliveries): the call's `integrations` object and whether its user is suppressed. Absent
   * (delete notifications, never filtered): every enabled destination gets the body as it is.
   */
  rules?: { integrations?: Record<string, unknown>; suppressed: boolean; planBlocked?: boolean };
  /**
   * Per destination whose filters changed the body, the body it gets: set by the plan; for a
   * redelivery, the bodies recorded, which today's rules start from.
   */
  destinationBodies?: Record<string, MessageBody>;
  /** Per actions destination, the mappings that send it (set by the plan; carried over by a redelivery). */
  mappings?: Record<string, string[]>;
  /** The W3C trace context of the message's span at ingest (tracing on); sealed with its bodies. */
  trace?: TraceCarrier;
  /**
   * The event as Segment's pipeline holds it (delivery/pipeline-event.ts): what an Actions
   * destination's rules and mappings start from, as on Segment. Absent: they start from `body`.
   */
  pipelineBody?: MessageBody;
}

export const outgoing = (message: Message, rules?: Outgoing['rules'], trace?: TraceCarrier): Outgoing => ({
  messageId: message.messageId,
  type: message.type,
  userId: message.userId,
  body: messageBody(message),
  ...(message.sent && { pipelineBody: pipelineEvent(message) }),
  ...(rules && { rules }),
  ...(trace && { trace }),
});

/** One (message, destination) decision as made: sent, or the first rule that stopped it (and its filter). */
export interface DestinationDecision {
  messageId: string;
  destinationId: string;
  decision: 'sent' | StopReason;
  filterId?: string;
}

/** `decisions`: every (message, destination) decision of the plan, in message order; what an ingest request records as its calls' fates. */
export type DeliveryPlan = { status: 'no_destinations' } | { status: 'planned'; inputs: DeliveryInput[]; decisions: DestinationDecision[] };

/** `dataKeys`: where the sealing reads keys (an ingest request's own reads: request-data-keys.ts); the store's otherwise. */
/** `recorder`: where this plan's stops are counted, in place of the planner's (ingest holds them until its starts succeed). */
export type PlanDeliveries = (sourceId: string, messages: Outgoing[], dataKeys?: DataKeyReads, recorder?: DecisionRecorder) => Promise<DeliveryPlan>;

/** A destination's consent and filters, as the decision reads them. */
export type DestinationRules = DeliveryDecisionInput['destination'];

/** What the decision reads about destinations (their consent and filters as saved now), and where its stops are counted. */
export interface PlanDecisions {
  /** The rules of these destinations of the source (consent as listed, filters and the source's transformations as saved now). */
  rulesOf(destinations: EnabledDestination[], sourceId?: string): Promise<Map<string, DestinationRules>>;
  recorder?: DecisionRecorder;
  clock?: () => number;
}

/**
 * One decision per (message, destination), made here and nowhere else, before any
 * workflow starts: the destinations that get the message, each with the body it gets, and every
 * stop counted for the overview. The first destination's body is the message's; another
 * destination gets a body of its own only where its filters made it different.
 */
type Decided = Outgoing & { destinationIds: string[]; stops?: Array<Omit<DestinationDecision, 'messageId' | 'decision'> & { decision: StopReason }> };

function decide(message: Outgoing, destinationIds: string[], rules: Map<string, DestinationRules>, decisions: PlanDecisions, triggers: DestinationTriggers): Decided {
  if (!message.rules || !message.body) return triggers.decideUnruled(message, destinationIds);
  const atMs = (decisions.clock ?? Date.now)();
  const sent: Array<{ id: string; body: MessageBody; mappings?: string[] }> = [];
  const stops: NonNullable<Decided['stops']> = [];
  for (const id of destinationIds) {
    const destination = rules.get(id) ?? { consent: { categories: [], whenAbsent: 'deliver' }, filters: [] };
    // A redelivery starts from the body this destination was sent (plan-deliveries' own, or the message's).
    // An Actions destination starts from the event as Segment's pipeline holds it, a classic one from the seed's body.
    const start = message.destinationBodies?.[id] ?? (triggers.has(id) && message.pipelineBody ? message.pipelineBody : message.body);
    const decision: DeliveryDecision =
      rules.has(id) || triggers.has(id) || message.rules.planBlocked
        ? decideDelivery({ body: start, integrations: message.rules.integrations, suppressed: message.rules.suppressed, planBlocked: message.rules.planBlocked, destination: { ...destination, ...triggers.of(id) } })
        : { send: start };
    if ('stop' in decision) {
      decisions.recorder?.filtered(id, atMs, decision.stop, decision.filterId);
      stops.push({ destinationId: id, decision: decision.stop, ...(decision.filterId !== undefined && { filterId: decision.filterId }) });
    } else {
      sent.push({ id, body: decision.send, ...(decision.mappings && { mappings: decision.mappings }) });
      for (const transformationId of decision.transformed ?? []) decisions.recorder?.transformed?.(id, atMs, transformationId);
    }
  }
  const { destinationBodies: _recorded, mappings: _recordedMappings, pipelineBody: _pipeline, ...rest } = message;
  if (sent.length === 0) return { ...rest, destinationIds: [], stops };
  const mappings = sent.filter((destination) => destination.mappings).map((destination) => [destination.id, destination.mappings!] as const);
  const body = sent[0].body;
  const others = sent.filter((destination) => destination.body !== body);
  return {
    ...rest,
    body,
    destinationIds: sent.map((destination) => destination.id),
    stops,
    ...(mappings.length > 0 && { mappings: Object.fromEntries(mappings) }),
    ...(others.length > 0 && { destinationBodies: Object.fromEntries(others.map((destination) => [destination.id, destination.body])) }),
  };
}

/**
 * The one place a delivery workflow's input is made, for ingested calls, delete notifications,
 * redeliveries and Personas syncs alike: the source's destinations enabled now (each attempt checks
 * again at send time), less those the rules stop for this message, and the delivery policy fixed
 * for the message's whole life. A message no destination gets starts no workflow. With `seal`
 * (payload keys), each call's seal is chosen from the call first, before any destination's rules,
 * and every body of its input is sealed under it (crypto-shredding: sealing is the call's, never a destination's).
 */
export function deliveryPlanner(destinations: Pick<Store['destinations'], 'listEnabled'>, policy: DeliveryPolicy, seal?: ChooseSeals, decisions?: PlanDecisions): PlanDeliveries {
  return async (sourceId, messages, dataKeys, recorder) => {
    const enabled = await destinations.listEnabled(sourceId);
    if (enabled.length === 0) return { status: 'no_destinations' };
    const enabledIds = enabled.map((destination) => destination.id);
    const webhookLabels = Object.fromEntries(enabled.map((destination) => [destination.id, destination.webhookUrls.map(webhookLabel)]));
    const triggers = triggersOf(enabled);
    // Before any decision: what a destination's filters leave of a body never chooses the seal.
    const seals = seal ? await seal(messages, dataKeys) : messages.map(() => OPEN);
    const decided: Decided[] =
      decisions && messages.some((message) => message.rules)
        ? await decisions.rulesOf(enabled, sourceId).then((rules) => messages.map((message) => decide(message, enabledIds, rules, recorder ? { ...decisions, recorder } : decisions, triggers)))
        : messages.map((message) => triggers.decideUnruled(message, enabledIds));
    const inputs = decided.flatMap((message, i): DeliveryInput[] => {
      const { messageId, type, userId, body, destinationBodies, mappings, destinationIds, trace } = message;
      if (destinationIds.length === 0) return [];
      if (!body) throw new Error(`message ${messageId} has no body to deliver`);
      return [
        {
          sourceId,
          messageId,
          type,
          ...inputBodies(messageId, seals[i], { userId, body, destinationBodies, trace }),
          destinationIds,
          ...(mappings && Object.keys(mappings).length > 0 && { mappings }),
          policy,
          webhookLabels: destinationIds.length === enabledIds.length ? webhookLabels : Object.fromEntries(destinationIds.map((id) => [id, webhookLabels[id]])),
        },
      ];
    });
    // Every destination of every message: sent, or stopped with the rule's reason (a destination
    // an unruled message's mappings leave out is the trigger's stop).
    const decisionsMade = decided.flatMap(({ messageId, destinationIds, stops }): DestinationDecision[] => {
      const ruled = new Map((stops ?? []).map((stop) => [stop.destinationId, stop]));
      return enabledIds.map((destinationId): DestinationDecision => {
        const stop = ruled.get(destinationId);
        if (stop) return { messageId, ...stop };
        return { messageId, destinationId, decision: destinationIds.includes(destinationId) ? 'sent' : 'trigger' };
      });
    });
    // Possibly none: the rules let no message of these through to any destination.
    return { status: 'planned', inputs, decisions: decisionsMade };
  };
}
