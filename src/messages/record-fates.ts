import { messageBody, type Message } from '../delivery/payload';
import type { Keyring } from '../privacy/keyring';
import { CALL_FATE, sealBody } from '../privacy/sealed-body';
import { messageSubject } from '../privacy/subjects';
import { visibleId } from '../privacy/visible-ids';
import type { FateSummary, MessageFate, Store } from '../store/types';
import type { CallFate } from './call-fate';
import type { DestinationDecision } from './plan-deliveries';
import type { DataKeyReads } from './request-data-keys';

/** One accepted call as ingest records its fates: the message as sent on, and its fate. */
export interface FatedCall {
  message: Message;
  fate: CallFate;
}

/** The ingest step that records a request's (message, destination) decisions, reading keys through the request's `dataKeys`. */
export type RecordFates = (sourceId: string, calls: FatedCall[], decisions: DestinationDecision[], dataKeys: DataKeyReads) => Promise<void>;

/**
 * Every (call, destination) decision of a request into the store, once Temporal holds its
 * deliveries: "what happened to one event" reads them. A row's plaintext columns name no user:
 * the ids and the event name as keyed hashes (to search by), and the same values sealed under the
 * call's data key (to show to payloads:read), so a DELETE regulation's crypto-shredding erases them
 * with every other copy. A suppressed user's call keeps nothing of the user (call-fate.ts: kept
 * nowhere): its rows say only that it was stopped, and why.
 */
export function fateRecorder(store: { fates: Pick<Store['fates'], 'add'> }, keyring: Keyring | undefined): RecordFates {
  return async (sourceId, calls, decisions, dataKeys) => {
    if (decisions.length === 0) return;
    const unsuppressed = new Map(calls.filter((call) => call.fate.kind !== 'suppressed').map((call) => [call.message.messageId, call.message]));
    const subjects = new Map([...unsuppressed].map(([messageId, message]) => [messageId, keyring ? messageSubject(keyring, message.type, messageBody(message)) : undefined]));
    const wanted = [...new Set([...subjects.values()].filter((s): s is string => s !== undefined))];
    const keys = wanted.length > 0 ? await dataKeys.getOrCreate(wanted) : new Map<string, Buffer>();
    const byMessage = new Map(calls.map((call) => [call.message.messageId, call.message]));
    const rows = decisions.flatMap((decision): MessageFate[] => {
      const message = byMessage.get(decision.messageId);
      if (!message) return [];
      const row: MessageFate = {
        sourceId,
        messageId: message.messageId,
        destinationId: decision.destinationId,
        receivedAt: message.receivedAt,
        type: message.type,
        decision: decision.decision,
        ...(decision.filterId !== undefined && { filterId: decision.filterId }),
      };
      if (!unsuppressed.has(message.messageId)) return [row];
      const event = message.event ?? message.name;
      const summary: FateSummary = {
        ...(message.userId !== undefined && { userId: message.userId }),
        ...(message.anonymousId !== undefined && { anonymousId: message.anonymousId }),
        ...(event !== undefined && { event }),
      };
      const subject = subjects.get(message.messageId);
      // With payload keys, nothing of the call is kept in the clear: a call with no subject to seal under keeps no summary.
      const kept = keyring === undefined ? summary : subject === undefined ? undefined : sealBody(keys.get(subject)!, subject, message.messageId, { type: message.type, ...summary }, CALL_FATE);
      return [
        {
          ...row,
          ...(message.userId !== undefined && { userHash: visibleId(keyring, 'userId', message.userId) }),
          ...(message.anonymousId !== undefined && { anonymousHash: visibleId(keyring, 'anonymousId', message.anonymousId) }),
          ...(event !== undefined && { eventHash: visibleId(keyring, 'eventName', event) }),
          ...(kept !== undefined && { summary: kept }),
        },
      ];
    });
    await store.fates.add(rows);
  };
}
