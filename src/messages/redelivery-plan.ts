import { callIds } from '../delivery/erasure';
import { isAboutSuppressed } from '../delivery/suppression';
import type { DeliveryInput, DeliveryPolicy, MessageBody, SealedBody } from '../delivery/types';
import { openBody, openCallIds, SealedBodyError } from '../privacy/sealed-body';
import type { Store } from '../store/types';
import { deliveryPlanner, type Outgoing, type PlanDecisions } from './plan-deliveries';
import type { ChooseSeals } from './seal-bodies';
import { suppressedUsers } from './suppressed-users';

/**
 * `planned`: the new run's input. `no_destinations`: none of the destinations it went to is enabled
 * now. `stopped`: today's rules let it reach none of them. `erased`: its user's data key is gone,
 * so nothing of it can be read or sent again.
 */
export type Redelivery = { status: 'planned'; input: DeliveryInput } | { status: 'no_destinations' | 'stopped' | 'erased' };

export type PlanRedelivery = (sourceId: string, input: DeliveryInput) => Promise<Redelivery>;

type RecordedBodies = { body: MessageBody; destinationBodies?: Record<string, MessageBody>; seal?: ChooseSeals };

/**
 * The bodies a recorded input sent, opened. A sealed input is sealed again under the very key it
 * was opened with, never a new one (seal-bodies.ts makes one for a subject that has none): a
 * regulation that destroys the key meanwhile still leaves the redelivery unreadable.
 */
async function openRecorded(dataKeys: Pick<Store['dataKeys'], 'get'>, input: DeliveryInput): Promise<RecordedBodies | 'erased'> {
  const recorded = Object.entries(input.destinationBodies ?? {});
  if (!input.sealedMessage) {
    if (!input.message) throw new Error(`the recorded input of message ${input.messageId} has no body`);
    const destinationBodies = Object.fromEntries(recorded.flatMap(([id, own]) => (own.message ? [[id, own.message]] : [])));
    return { body: input.message, ...(recorded.length > 0 && { destinationBodies }) };
  }
  const { subject } = input.sealedMessage;
  const key = await dataKeys.get(subject);
  if (!key) return 'erased';
  try {
    const open = (sealed: SealedBody) => openBody(key, input.messageId, sealed);
    const destinationBodies = Object.fromEntries(recorded.flatMap(([id, own]) => (own.sealedMessage ? [[id, open(own.sealedMessage)]] : [])));
    const body = open(input.sealedMessage);
    // The call's ids as sealed beside the body; an input sealed before them has only its body's.
    const ids = openCallIds(key, input.messageId, input.sealedMessage) ?? callIds(input.type, body);
    const seal: ChooseSeals = async (messages) => messages.map(() => ({ sealed: true, subject, key, visibleIds: input.visibleIds ?? {}, ids }));
    return { body, ...(recorded.length > 0 && { destinationBodies }), seal };
  } catch (err) {
    // A body that does not authenticate under its key is never sent again.
    if (err instanceof SealedBodyError) return 'erased';
    throw err;
  }
}

/**
 * A redelivery of an old message re-applies today's rules: a redelivery goes to the
 * destinations the message went to that are enabled now, each starting from the body it was sent,
 * through today's decision (consent, suppression, filters). The `integrations` object is not
 * recorded; every destination it went to had passed it, and it does not change. Destinations added
 * since get nothing: a backfill is a replay of the archive. Delete notifications are never filtered.
 */
export function redeliveryPlanner(store: Pick<Store, 'destinations' | 'dataKeys' | 'suppressions'>, policy: DeliveryPolicy, rulesOf: PlanDecisions['rulesOf']): PlanRedelivery {
  return async (sourceId, input) => {
    const recorded = await openRecorded(store.dataKeys, input);
    if (recorded === 'erased') return { status: 'erased' };
    const { body, destinationBodies, seal } = recorded;
    const rules = input.type === 'delete' ? undefined : { suppressed: isAboutSuppressed(body, await suppressedUsers(store.suppressions, [body])) };
    const again: Outgoing = {
      messageId: input.messageId,
      type: input.type,
      userId: input.userId,
      body,
      ...(destinationBodies && { destinationBodies }),
      ...(rules && { rules }),
    };
    // The destinations it went to, those of them enabled now.
    const wentTo: Pick<Store['destinations'], 'listEnabled'> = {
      listEnabled: async (id) => (await store.destinations.listEnabled(id)).filter((destination) => input.destinationIds.includes(destination.id)),
    };
    const plan = await deliveryPlanner(wentTo, policy, seal, { rulesOf })(sourceId, [again]);
    if (plan.status === 'no_destinations') return plan;
    return plan.inputs.length > 0 ? { status: 'planned', input: plan.inputs[0] } : { status: 'stopped' };
  };
}
