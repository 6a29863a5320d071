import { toDeleteMessage } from '../delivery/payload';
import type { Keyring } from '../privacy/keyring';
import { visibleId } from '../privacy/visible-ids';
import type { Regulation } from '../store/types';
import type { Outgoing } from './plan-deliveries';

/**
 * Seed, Events: a DELETE regulation sends each affected source's destinations one `delete`
 * message per user. Its id derives from the regulation, so a retried start cannot notify twice;
 * from the user by the keyed hash: the id names the workflow, which outlives the
 * user's data in Temporal and in reasons that quote it. The body still carries the userId the
 * seed requires.
 */
export function deleteNotification(keyring: Keyring | undefined, regulation: Pick<Regulation, 'id' | 'createdAt'>, userId: string): Outgoing {
  return { messageId: `${regulation.id}:${visibleId(keyring, 'userId', userId)}`, type: 'delete', userId, body: toDeleteMessage(userId, regulation.createdAt) };
}
