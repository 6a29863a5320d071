import type { MessageBody, MessageType } from '../delivery/types';
import { identifierHash, type Keyring } from './keyring';

/**
 * Whose data key seals a message (crypto-shredding): its userId when it has one, else its
 * anonymousId (an anonymous visitor is a subject of its own until an alias links it to a user).
 * None for a delete notification (it must still reach receivers after the user's key is gone) or
 * a message with neither id. Subjects are known by their keyed hash only, the same value the
 * SwitchyardUserId / SwitchyardAnonymousId search attributes carry.
 */
export function messageSubject(keyring: Keyring, type: MessageType, body: MessageBody): string | undefined {
  if (type === 'delete') return undefined;
  if (typeof body.userId === 'string' && body.userId !== '') return identifierHash(keyring, 'userId', body.userId);
  if (typeof body.anonymousId === 'string' && body.anonymousId !== '') return identifierHash(keyring, 'anonymousId', body.anonymousId);
  return undefined;
}

/**
 * The subjects a DELETE regulation for these ids destroys: each id as a userId and as an
 * anonymousId, since a linked id (an anonymousId, an alias's previousId) may have sealed messages
 * under either kind.
 */
export function erasedSubjects(keyring: Keyring, ids: string[]): string[] {
  return [...new Set(ids.flatMap((id) => [identifierHash(keyring, 'userId', id), identifierHash(keyring, 'anonymousId', id)]))];
}
