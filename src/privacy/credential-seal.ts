import { openWithKey, sealWithKey } from './aes-gcm';
import type { Keyring } from './keyring';

/**
 * Receiver credentials at rest (issue 29 item 10): a destination's shared secret, Standard Webhooks
 * signing secrets and static header values, each sealed with AES-256-GCM under a payload master key
 * (the same keyring, so rotation and `npm run keys:rewrap` cover them). The destination id and the
 * field are bound as AAD: a sealed value copied onto another destination, or into another field of
 * the same one (a header value into the shared secret), does not open.
 */
export type CredentialField =
  | { kind: 'sharedSecret' }
  | { kind: 'signingSecret' }
  | { kind: 'previousSigningSecret' }
  /** A static header's value, bound to its URL and name; `index` only names it in errors (a URL may carry a token). */
  | { kind: 'header'; url: string; name: string; index: number }
  /** Issue 33: a mapping's static header value, bound to the mapping's name and the header's. */
  | { kind: 'mappingHeader'; mapping: string; name: string; index: number }
  /** Issue 33: the outbound auth settings and the mutual TLS certificate and key, each sealed whole as JSON. */
  | { kind: 'auth' }
  | { kind: 'tls' };

/** The field as an operator reads it in an error: never the value, never the URL. */
export function credentialFieldName(field: CredentialField): string {
  if (field.kind === 'header') return `webhooks[${field.index}].headers.${field.name}`;
  if (field.kind === 'mappingHeader') return `mappings[${field.index}].settings.headers.${field.name}`;
  return field.kind;
}

const aad = (destinationId: string, field: CredentialField) => Buffer.from(['switchyard-credential-v1', destinationId, field.kind, ...(field.kind === 'header' ? [field.url, field.name] : field.kind === 'mappingHeader' ? [field.mapping, field.name] : [])].join('\0'), 'utf8');

/** A credential that does not open: its key is not listed, or it does not authenticate where it is. */
export class CredentialSealError extends Error {
  override name = 'CredentialSealError';
}

/** Seals a value under the master key `keyId` (the active one when writing); base64, for a text column. */
export function sealCredential(keyring: Keyring, keyId: string, destinationId: string, field: CredentialField, value: string): string {
  return sealWithKey(keyring.keys.get(keyId)!, aad(destinationId, field), Buffer.from(value, 'utf8')).toString('base64');
}

/** The value of a sealed credential; the error names the destination, the field and the key id, nothing else. */
export function openCredential(keyring: Keyring | undefined, keyId: string, destinationId: string, field: CredentialField, sealed: string): string {
  if (!keyring) {
    throw new CredentialSealError(`destination ${destinationId}: its credentials are sealed under payload key "${keyId}", and this process has no payload keys (PAYLOAD_ENCRYPTION=off); list the keys in PAYLOAD_KEYS`);
  }
  const key = keyring.keys.get(keyId);
  if (!key) {
    throw new CredentialSealError(`destination ${destinationId}: its credentials are sealed under payload key "${keyId}", which is not listed in PAYLOAD_KEYS (listed: ${[...keyring.keys.keys()].join(', ')})`);
  }
  try {
    return openWithKey(key, aad(destinationId, field), Buffer.from(sealed, 'base64')).toString('utf8');
  } catch {
    throw new CredentialSealError(`destination ${destinationId}: its sealed ${credentialFieldName(field)} does not authenticate (altered, or copied from another destination or field)`);
  }
}
