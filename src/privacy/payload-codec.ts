import type { Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { isSealedLength, openWithKey, sealWithKey } from './aes-gcm';
import type { Keyring } from './keyring';

/** The metadata that marks a payload as ours to decrypt, and names the key that encrypted it. */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const KEY_ID_METADATA = 'encryption-key-id';

const ProtoPayload = temporal.api.common.v1.Payload;

/** A payload this process cannot decrypt: its key is not listed, or it fails authentication. */
export class PayloadDecryptionError extends Error {
  override name = 'PayloadDecryptionError';
  constructor(
    message: string,
    readonly keyId: string,
  ) {
    super(message);
  }
}

// The key id is authenticated with the ciphertext: relabelling a payload with another listed key id
// cannot make it decrypt under that key, and the format version is bound for a later change.
const aad = (keyId: string) => Buffer.from(`switchyard-payload-v1\0${keyId}`, 'utf8');

/** Encrypts one payload under the keyring's active key: the whole payload (metadata too) inside the ciphertext. */
export function encryptPayload(keyring: Keyring, payload: Payload): Payload {
  const keyId = keyring.activeKeyId;
  return {
    metadata: { encoding: Buffer.from(ENCRYPTED_ENCODING), [KEY_ID_METADATA]: Buffer.from(keyId) },
    data: sealWithKey(keyring.keys.get(keyId)!, aad(keyId), ProtoPayload.encode(payload).finish()),
  };
}

export const isEncrypted = (payload: Payload): boolean => Buffer.from(payload.metadata?.encoding ?? []).toString() === ENCRYPTED_ENCODING;

/**
 * The original payload of an encrypted one; any other payload as it is (histories written before
 * encryption, or with PAYLOAD_ENCRYPTION=off, keep reading). Fails loudly, naming the key id (never
 * its bytes), when the key is not listed or the ciphertext does not authenticate.
 */
export function decryptPayload(keyring: Keyring, payload: Payload): Payload {
  if (!isEncrypted(payload)) return payload;
  const keyId = Buffer.from(payload.metadata?.[KEY_ID_METADATA] ?? []).toString();
  const key = keyring.keys.get(keyId);
  if (!key) {
    throw new PayloadDecryptionError(`payload encrypted with key "${keyId}", which is not listed in PAYLOAD_KEYS (listed: ${[...keyring.keys.keys()].join(', ')})`, keyId);
  }
  const data = Buffer.from(payload.data ?? []);
  if (!isSealedLength(data)) throw new PayloadDecryptionError(`payload encrypted with key "${keyId}" is truncated`, keyId);
  try {
    return ProtoPayload.decode(openWithKey(key, aad(keyId), data));
  } catch {
    throw new PayloadDecryptionError(`payload encrypted with key "${keyId}" does not authenticate: altered, or another key listed under the same id`, keyId);
  }
}

/**
 * Temporal's data-converter step for every client and worker Switchyard makes: payloads
 * leave this process encrypted under the active key and come back decrypted by the key they name.
 */
export class EncryptionCodec implements PayloadCodec {
  constructor(private readonly keyring: Keyring) {}

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => encryptPayload(this.keyring, payload));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => decryptPayload(this.keyring, payload));
  }
}
