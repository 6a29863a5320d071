import { toDeleteMessage } from '../delivery/payload';
import type { Regulation } from '../store/types';
import type { Outgoing } from './plan-deliveries';

/**
 * Seed, Events: a DELETE regulation sends each affected source's destinations one `delete`
 * message per user. Its id derives from the regulation, so a retried start cannot notify twice.
 */
export function deleteNotification(regulation: Pick<Regulation, 'id' | 'createdAt'>, userId: string): Outgoing {
  return { messageId: `${regulation.id}:${userId}`, type: 'delete', userId, body: toDeleteMessage(userId, regulation.createdAt) };
}
