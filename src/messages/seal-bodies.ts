import { identifierHash, type Keyring } from '../privacy/keyring';
import { sealBody } from '../privacy/sealed-body';
import { messageSubject } from '../privacy/subjects';
import type { Store } from '../store/types';
import type { DeliveryInput, MessageBody } from '../delivery/types';
import type { Outgoing, SealBodies } from './plan-deliveries';

/**
 * The step before a delivery input is made, for new data only (ingested calls, Personas syncs):
 * each body with a subject leaves sealed under that subject's data key, made now if it has none (a
 * user erased before gets a new key: new calls after a regulation are delivered). Redeliveries do
 * not pass through here: they are sealed again under the key they were opened with
 * (redelivery-plan.ts), never a new one, so a shredded body stays unreadable. An ingest request
 * passes its own `readKeys` (request-data-keys.ts): the keys its archive step read already.
 */
export function bodySealer(dataKeys: Pick<Store['dataKeys'], 'getOrCreate'>, keyring: Keyring): SealBodies {
  return async (messages, readKeys = dataKeys) => {
    const subjects = messages.map((m) => (m.body ? messageSubject(keyring, m.type, m.body) : undefined));
    const wanted = subjects.filter((s): s is string => s !== undefined);
    if (wanted.length === 0) return messages;
    const keys = await readKeys.getOrCreate(wanted);
    return messages.map((m, i) => {
      const subject = subjects[i];
      if (subject === undefined || !m.body) return m;
      // The ids leave with the body: what visibility needs is their keyed hashes, which name nobody.
      const anonymousId = stringField(m.body.anonymousId);
      const visibleIds = { ...(m.userId && { userId: identifierHash(keyring, 'userId', m.userId) }), ...(anonymousId && { anonymousId: identifierHash(keyring, 'anonymousId', anonymousId) }) };
      return sealOutgoing(keys.get(subject)!, subject, { ...m, body: m.body }, visibleIds);
    });
  };
}

/**
 * One message's bodies sealed under its subject's data key, the ids leaving with them (`visibleIds`
 * names them by keyed hash). A destination's own body (its filters changed it) is sealed under the
 * same key: erased with the rest.
 */
export function sealOutgoing(key: Buffer, subject: string, m: Outgoing & { body: MessageBody }, visibleIds: DeliveryInput['visibleIds']): Outgoing {
  const { body, userId, destinationBodies, ...rest } = m;
  const sealedDestinationBodies = destinationBodies && Object.fromEntries(Object.entries(destinationBodies).map(([id, own]) => [id, sealBody(key, subject, m.messageId, own)]));
  return { ...rest, ...(visibleIds !== undefined && { visibleIds }), sealedBody: sealBody(key, subject, m.messageId, body), ...(sealedDestinationBodies && { sealedDestinationBodies }) };
}

const stringField = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
