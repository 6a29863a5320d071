import type { CallType } from '../delivery/types';

/**
 * A call as a sender made it: one Segment API call (identify, track, page, screen, group, alias),
 * its JSON fields exactly as received. Accepting it (accept-calls.ts) makes a message.
 */
export interface Call {
  type: CallType;
  fields: Record<string, unknown>;
}
