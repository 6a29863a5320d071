import { messageBody } from '../delivery/payload';
import type { ArchivedCall } from '../delivery/replay';
import type { Keyring } from '../privacy/keyring';
import { ARCHIVED_CALL, sealBody } from '../privacy/sealed-body';
import { messageSubject } from '../privacy/subjects';
import { visibleId } from '../privacy/visible-ids';
import type { ArchivedMessage, Store } from '../store/types';
import type { AcceptedCall } from './accept-calls';
import type { DataKeyReads } from './request-data-keys';

/** The ingest step that archives a request's accepted calls, reading keys through the request's `dataKeys`. */
export type ArchiveCalls = (sourceId: string, accepted: ArchivableCall[], dataKeys: DataKeyReads) => Promise<void>;

/** An accepted call as sent, with the tracking plan's verdict on it where the source has a plan. */
export type ArchivableCall = AcceptedCall & { plan?: ArchivedCall['plan'] };

/**
 * Every accepted call into the archive before the request is answered (it is part of
 * "durable"), whether any destination gets it or not: the body as it would be sent and the call's
 * `integrations` (what a replay decides by), sealed as one under the user's data key, so the
 * crypto-shredding of a DELETE regulation erases the archived copy with every other. The columns
 * beside it name no user: ids as the keyed hashes visibility carries. One key read (shared with the
 * sealing: request-data-keys.ts) and one INSERT per request. Without a keyring (PAYLOAD_ENCRYPTION=off) nothing is sealed, as with deliveries.
 */
export function callArchiver(store: { archive: Pick<Store['archive'], 'add'> }, keyring: Keyring | undefined): ArchiveCalls {
  return async (sourceId, accepted, dataKeys) => {
    if (accepted.length === 0) return;
    const calls = accepted.map(({ message, integrations, plan }): ArchivedCall => ({
      type: message.type,
      message: messageBody(message),
      ...(integrations !== undefined && { integrations }),
      ...(plan && { plan }),
    }));
    const subjects = calls.map((call) => (keyring ? messageSubject(keyring, call.type, call.message) : undefined));
    const wanted = subjects.filter((s): s is string => s !== undefined);
    const keys = wanted.length > 0 ? await dataKeys.getOrCreate(wanted) : new Map<string, Buffer>();
    const messages = accepted.map(({ message }, i): ArchivedMessage => {
      const subject = subjects[i];
      return {
        sourceId,
        messageId: message.messageId,
        type: message.type,
        receivedAt: message.receivedAt,
        ...(message.userId !== undefined && { userHash: visibleId(keyring, 'userId', message.userId) }),
        ...(message.anonymousId !== undefined && { anonymousHash: visibleId(keyring, 'anonymousId', message.anonymousId) }),
        call: subject === undefined ? calls[i] : sealBody(keys.get(subject)!, subject, message.messageId, calls[i], ARCHIVED_CALL),
        ...(accepted[i].plan && { planStatus: accepted[i].plan.status }),
      };
    });
    await store.archive.add(messages);
  };
}
