import type { CallType } from '../../src/delivery/types';
import { acceptCall } from '../../src/messages/accept-calls';
import { profileUpdates } from '../../src/personas/profile-updates';

/** Calls accepted as the ingestion path accepts them (no HTTP), then what they change in the profiles. */
export const profileUpdatesOf = (calls: { type: CallType; raw: Record<string, unknown> }[], receivedAtMs: number, batchSentAt?: string) =>
  profileUpdates(calls.map(({ type, raw }) => acceptCall({ type, fields: raw }, receivedAtMs, batchSentAt)));
