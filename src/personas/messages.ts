import type { Message } from '../delivery/payload';
import type { Keyring } from '../privacy/keyring';
import { personasMessageId } from './message-ids';
import type { ComputationKind } from './types';

/** What the sync knows about the computation when it builds a page of messages. */
export interface SyncedComputation {
  kind: ComputationKind;
  id: string;
  key: string;
  version: number;
  /** When the version's changes were computed: every message of the version carries this timestamp. */
  computedAt: string;
}

export interface ProfileChange {
  profileId: string;
  /** Null for a profile known only by its anonymous id (the profile id then is that anonymous id). */
  userId: string | null;
  /** JSON text of the new value. */
  value: string;
  /** JSON text of the profile's latest consent preferences; null or absent: none known. */
  consent?: string | null;
}

/**
 * Seed, Personas rules 1-2: a computed trait or an audience membership is sent as an identify call
 * whose traits hold one property, the snake_case key, with the value (`true`/`false` for an
 * audience). `context.personas` tells a receiver which computation sent it, in the keys Segment uses.
 * The profile's latest consent preferences ride along as `context.consent.categoryPreferences`,
 * so the one delivery decision sends the change only to destinations they grant, and
 * a destination with `whenAbsent: "drop"` gets nothing about a profile whose preferences are unknown.
 * Everything here is derived from its inputs, so a rerun of the same version builds the same bytes.
 */
export function toPersonasIdentify(keyring: Keyring | undefined, computation: SyncedComputation, change: ProfileChange): Message {
  return {
    type: 'identify',
    messageId: personasMessageId(keyring, computation.id, computation.version, change.profileId),
    ...(change.userId !== null ? { userId: change.userId } : { anonymousId: change.profileId }),
    timestamp: computation.computedAt,
    receivedAt: computation.computedAt,
    context: {
      personas: {
        computation_class: computation.kind,
        computation_id: computation.id,
        computation_key: computation.key,
      },
      ...(change.consent != null && { consent: { categoryPreferences: JSON.parse(change.consent) as Record<string, unknown> } }),
    },
    traits: { [computation.key]: JSON.parse(change.value) as unknown },
  };
}
