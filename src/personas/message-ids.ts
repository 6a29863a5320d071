import { createHash } from 'node:crypto';

/**
 * Sync messages get ids derived from what they say, never random ones: a sync that crashes and runs
 * again computes the same id for the same change, the delivery workflow id (source + messageId)
 * is the same, and Temporal refuses to start it twice. RFC 4122 UUID version 5 (SHA-1, name-based)
 * so receivers that expect a UUID messageId get one.
 */

/** Namespace of Switchyard's Personas message ids (a fixed random UUID; changing it changes every id). */
export const PERSONAS_NAMESPACE = '6f1d7a4e-3c1b-4b7e-9a53-2f0c8e1d5b96';

export function uuidV5(name: string, namespace: string): string {
  const ns = Buffer.from(namespace.replace(/-/g, ''), 'hex');
  if (ns.length !== 16) throw new Error(`namespace ${namespace} is not a UUID`);
  const bytes = createHash('sha1').update(ns).update(name, 'utf8').digest().subarray(0, 16);
  bytes[6] = (bytes[6] & 0x0f) | 0x50;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * One message per (computation, snapshot version, profile): the "derived deterministically
 * from (definition, snapshot version, user)". The parts are JSON-encoded so no choice of ids can
 * make two different triples collide on a separator.
 */
export function personasMessageId(computationId: string, version: number, profileId: string): string {
  return uuidV5(JSON.stringify([computationId, version, profileId]), PERSONAS_NAMESPACE);
}
