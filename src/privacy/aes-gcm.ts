import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * AES-256-GCM as every key-sealed value of Switchyard keeps it (payloads, wrapped data keys,
 * receiver credentials): a random 96-bit nonce ‖ ciphertext ‖ 128-bit tag, with the caller's AAD
 * saying what the value is and where it belongs, so a sealed value moved elsewhere does not open.
 */

const NONCE_BYTES = 12;
const TAG_BYTES = 16;

export function sealWithKey(key: Buffer, aad: Buffer, plaintext: Uint8Array): Buffer {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(aad);
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([nonce, ciphertext, cipher.getAuthTag()]);
}

/** Whether `data` is long enough to be a sealed value at all (callers name a truncated one apart). */
export const isSealedLength = (data: Uint8Array): boolean => data.length >= NONCE_BYTES + TAG_BYTES;

/**
 * The plaintext of a sealed value. Throws (a bare Error, with nothing of the key or the value) when
 * it does not authenticate under this key and AAD; callers say which value it was.
 */
export function openWithKey(key: Buffer, aad: Buffer, data: Uint8Array): Buffer {
  if (!isSealedLength(data)) throw new Error('truncated');
  const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, NONCE_BYTES));
  decipher.setAAD(aad);
  decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
  return Buffer.concat([decipher.update(data.subarray(NONCE_BYTES, data.length - TAG_BYTES)), decipher.final()]);
}
