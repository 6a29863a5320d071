import { randomBytes } from 'node:crypto';
import { openWithKey, sealWithKey } from './aes-gcm';
import type { Keyring } from './keyring';

/**
 * A subject's data key as the store keeps it (crypto-shredding): AES-256-GCM under a
 * master key, the subject hash bound as AAD so a wrapped key copied onto another subject's row does
 * not unwrap, and the master key's id kept beside it so a rotation keeps unwrapping older rows.
 */
export interface WrappedDataKey {
  masterKeyId: string;
  /** nonce ‖ ciphertext ‖ tag. */
  wrapped: Buffer;
}

export const DATA_KEY_BYTES = 32;

const aad = (subjectHash: string) => Buffer.from(`switchyard-data-key-v1\0${subjectHash}`, 'utf8');

/** A fresh random data key for a subject. */
export const newDataKey = (): Buffer => randomBytes(DATA_KEY_BYTES);

/** Wraps a data key under the keyring's active master key. */
export function wrapDataKey(keyring: Keyring, subjectHash: string, dataKey: Buffer): WrappedDataKey {
  const masterKeyId = keyring.activeKeyId;
  return { masterKeyId, wrapped: sealWithKey(keyring.keys.get(masterKeyId)!, aad(subjectHash), dataKey) };
}

/**
 * The data key of a stored row. Fails loudly, naming the master key id (never key bytes), when that
 * key is no longer listed or the row does not authenticate for this subject: a data key that cannot
 * be unwrapped is an operator's mistake to fix, not an erasure.
 */
export function unwrapDataKey(keyring: Keyring, subjectHash: string, row: WrappedDataKey): Buffer {
  const master = keyring.keys.get(row.masterKeyId);
  if (!master) throw new Error(`data key wrapped with master key "${row.masterKeyId}", which is not listed in PAYLOAD_KEYS`);
  try {
    const key = openWithKey(master, aad(subjectHash), row.wrapped);
    if (key.length !== DATA_KEY_BYTES) throw new Error('wrong length');
    return key;
  } catch {
    throw new Error(`data key wrapped with master key "${row.masterKeyId}" does not authenticate for its subject`);
  }
}
