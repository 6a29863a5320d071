import { v5 } from 'uuid';
import type { Keyring } from '../privacy/keyring';
import { visibleId } from '../privacy/visible-ids';

/**
 * Sync messages get ids derived from what they say, never random ones: a sync that crashes and runs
 * again computes the same id for the same change, the delivery workflow id (source + messageId)
 * is the same, and Temporal refuses to start it twice. RFC 4122 UUID version 5 (SHA-1, name-based)
 * so receivers that expect a UUID messageId get one.
 */

/** Namespace of Switchyard's Personas message ids (a fixed random UUID; changing it changes every id). */
export const PERSONAS_NAMESPACE = '6f1d7a4e-3c1b-4b7e-9a53-2f0c8e1d5b96';

/** RFC 4122 name-based UUID (version 5, SHA-1) of `name` in `namespace`. */
export const uuidV5 = (name: string, namespace: string): string => v5(name, namespace);

/**
 * One message per (computation, snapshot version, profile): the "derived deterministically
 * from (definition, snapshot version, user)". The parts are JSON-encoded so no choice of ids can
 * make two different triples collide on a separator. With keys the profile id enters as its keyed
 * hash: the message id is in the workflow id, and an unkeyed UUIDv5 of a guessed email
 * would confirm it; the hash key does not change, so a rerun still computes the same id.
 */
export function personasMessageId(keyring: Keyring | undefined, computationId: string, version: number, profileId: string): string {
  return uuidV5(JSON.stringify([computationId, version, visibleId(keyring, 'profileId', profileId)]), PERSONAS_NAMESPACE);
}
