import { CredentialSealError, openCredential, sealCredential, type CredentialField } from '../privacy/credential-seal';
import type { Keyring } from '../privacy/keyring';

/**
 * How a sources row keeps its source function's settings (sensitive values among them): sealed whole
 * under the keyring's active key and bound to the source, as `sealed:<key id>:<ciphertext>`, which
 * is never JSON, so a row written as plain JSON (before settings were sealed, or with
 * PAYLOAD_ENCRYPTION=off) still reads as it was written.
 */

const FIELD: CredentialField = { kind: 'sourceFunctionSettings' };
export const SEALED_MARK = 'sealed:';

export function storedSourceFunctionSettings(keyring: Keyring | undefined, sourceId: string, settings: Record<string, unknown>): string {
  const text = JSON.stringify(settings);
  if (!keyring) return text;
  const keyId = keyring.activeKeyId;
  return `${SEALED_MARK}${keyId}:${sealCredential(keyring, keyId, sourceId, FIELD, text)}`;
}

/** The settings in plaintext; throws CredentialSealError naming the source and the key, never a value. */
export function openedSourceFunctionSettings(keyring: Keyring | undefined, sourceId: string, stored: string | null | undefined): Record<string, unknown> {
  if (!stored) return {};
  if (!stored.startsWith(SEALED_MARK)) return JSON.parse(stored) as Record<string, unknown>;
  const rest = stored.slice(SEALED_MARK.length);
  const at = rest.lastIndexOf(':');
  try {
    return JSON.parse(openCredential(keyring, rest.slice(0, at), sourceId, FIELD, rest.slice(at + 1))) as Record<string, unknown>;
  } catch (err) {
    // The seal's words are a destination's; this row is a source's.
    if (err instanceof CredentialSealError) throw new CredentialSealError(err.message.replace(/^destination /, 'source ').replace('its credentials are', "its function's settings are"));
    throw err;
  }
}
