import { callIds, type CallIds } from '../delivery/erasure';
import type { DeliveryInput, MessageBody, MessageType, TraceCarrier } from '../delivery/types';
import { identifierHash, type Keyring } from '../privacy/keyring';
import { sealBody } from '../privacy/sealed-body';
import { messageSubject } from '../privacy/subjects';
import type { Store } from '../store/types';
import type { DataKeyReads } from './request-data-keys';

/**
 * Sealing decided by the call, never by a destination's rules: how every body of
 * one call enters Temporal, chosen from the call as accepted, before any destination's consent,
 * filters or mappings had a say. `sealed`: under the subject's data key, the ids leaving with the
 * bodies (`visibleIds`: their keyed hashes, for visibility) and sealed beside each body (`ids`: for
 * the send-time checks). `open`: nothing to seal under (no payload keys, a delete notification, a
 * call with no id): the bodies go as they are.
 */
export type CallSeal = { sealed: true; subject: string; key: Buffer; visibleIds: NonNullable<DeliveryInput['visibleIds']>; ids: CallIds } | { sealed: false };

export const OPEN: CallSeal = { sealed: false };

/** The step that chooses each call's seal, from its body as accepted, reading keys through `dataKeys` when given. */
export type ChooseSeals = (messages: ReadonlyArray<{ type: MessageType; body?: MessageBody }>, dataKeys?: DataKeyReads) => Promise<CallSeal[]>;

/**
 * The seal of each call with a subject (new data: ingested calls, Personas syncs, replays): the
 * subject's data key, made now if it has none (a user erased before gets a new key: new calls after
 * a regulation are delivered). Redeliveries choose theirs apart (redelivery-plan.ts): the key the
 * recorded body was opened with, never a new one, so a shredded body stays unreadable. An ingest
 * request passes its own `readKeys` (request-data-keys.ts): the keys its archive step read already.
 */
export function bodySealer(dataKeys: Pick<Store['dataKeys'], 'getOrCreate'>, keyring: Keyring): ChooseSeals {
  return async (messages, readKeys = dataKeys) => {
    // The call's own body: read before plan-deliveries lets any destination's rules change it.
    const subjects = messages.map((m) => (m.body ? messageSubject(keyring, m.type, m.body) : undefined));
    const wanted = subjects.filter((s): s is string => s !== undefined);
    const keys = wanted.length > 0 ? await readKeys.getOrCreate(wanted) : new Map<string, Buffer>();
    return messages.map((m, i): CallSeal => {
      const subject = subjects[i];
      if (subject === undefined || !m.body) return OPEN;
      return { sealed: true, subject, key: keys.get(subject)!, visibleIds: callVisibleIds(keyring, m.body), ids: callIds(m.type, m.body) };
    });
  };
}

/** What visibility needs of a call's ids: their keyed hashes, which name nobody. */
export function callVisibleIds(keyring: Keyring, body: MessageBody): NonNullable<DeliveryInput['visibleIds']> {
  const userId = text(body.userId);
  const anonymousId = text(body.anonymousId);
  return { ...(userId && { userId: identifierHash(keyring, 'userId', userId) }), ...(anonymousId && { anonymousId: identifierHash(keyring, 'anonymousId', anonymousId) }) };
}

declare const underCallSeal: unique symbol;

/**
 * The bodies of one delivery input and the ids beside them, as only `inputBodies` makes them: the
 * planner cannot put a body into a workflow input any other way.
 */
export type InputBodies = Pick<DeliveryInput, 'userId' | 'visibleIds' | 'message' | 'sealedMessage' | 'destinationBodies' | 'trace'> & { readonly [underCallSeal]: true };

/**
 * The one way a body enters a delivery input: every body of the call (the message's, and each
 * destination's own, however its filters or mappings changed it) under the call's seal, the call's
 * ids sealed beside each, the userId leaving with them. Only an open seal lets bodies in the clear.
 */
export function inputBodies(messageId: string, seal: CallSeal, bodies: { userId?: string; body: MessageBody; destinationBodies?: Record<string, MessageBody>; trace?: TraceCarrier }): InputBodies {
  const { userId, body, destinationBodies, trace } = bodies;
  if (!seal.sealed) {
    const own = destinationBodies && Object.fromEntries(Object.entries(destinationBodies).map(([id, message]) => [id, { message }]));
    return { ...(userId !== undefined && { userId }), message: body, ...(own && { destinationBodies: own }), ...(trace && { trace }) } as InputBodies;
  }
  // The trace context (the caller's tracestate is the caller's data) is sealed beside
  // every body, so each attempt opens it with the body it sends and the input holds it nowhere else.
  const sealed = (message: MessageBody) => sealBody(seal.key, seal.subject, messageId, message, undefined, seal.ids, trace);
  const own = destinationBodies && Object.fromEntries(Object.entries(destinationBodies).map(([id, message]) => [id, { sealedMessage: sealed(message) }]));
  return { visibleIds: seal.visibleIds, sealedMessage: sealed(body), ...(own && { destinationBodies: own }) } as InputBodies;
}

const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
