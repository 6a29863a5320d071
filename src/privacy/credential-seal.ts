import { openWithKey, sealWithKey } from './aes-gcm';
import type { Keyring } from './keyring';

/**
 * Receiver credentials at rest: a destination's shared secret, Standard Webhooks
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
  /**
   * A mapping's static header value, bound to the mapping's name and the header's; since
   * URL-bound secrets to the mapping's URL as well (a webhook header's binding), so a value does not open
   * once its mapping points elsewhere.
   */
  | { kind: 'mappingHeader'; mapping: string; url: string; name: string; index: number }
  /** The outbound auth settings and the mutual TLS certificate and key, each sealed whole as JSON. */
  | { kind: 'auth' }
  | { kind: 'tls' }
  /** A destination function instance's settings (sensitive values among them), sealed whole as JSON. */
  | { kind: 'functionSettings' }
  | { kind: 'insertFunctionSettings' }
  /** A source function's settings, bound to their source's id the same way. */
  | { kind: 'sourceFunctionSettings' };

/** The field as an operator reads it in an error: never the value, never the URL. */
export function credentialFieldName(field: CredentialField): string {
  if (field.kind === 'header') return `webhooks[${field.index}].headers.${field.name}`;
  if (field.kind === 'mappingHeader') return `mappings[${field.index}].settings.headers.${field.name}`;
  return field.kind;
}

/**
 * Marks a mapping header value sealed bound to its mapping's URL. Values sealed before
 * carry no mark and open under their first binding (name only) until the row's next write re-seals
 * them bound; the mark is outside the ciphertext, and a value moved from one form to the other does
 * not authenticate under the other's AAD.
 */
const URL_BOUND_MARK = 'u1.';

const aadParts = (field: CredentialField, urlBound: boolean): string[] => {
  if (field.kind === 'header') return [field.url, field.name];
  if (field.kind === 'mappingHeader') return urlBound ? ['at-url', field.mapping, field.url, field.name] : [field.mapping, field.name];
  return [];
};

const aad = (destinationId: string, field: CredentialField, urlBound = true) => Buffer.from(['switchyard-credential-v1', destinationId, field.kind, ...aadParts(field, urlBound)].join('\0'), 'utf8');

/** A credential that does not open: its key is not listed, or it does not authenticate where it is. */
export class CredentialSealError extends Error {
  override name = 'CredentialSealError';
}

/** Seals a value under the master key `keyId` (the active one when writing); base64, for a text column. */
export function sealCredential(keyring: Keyring, keyId: string, destinationId: string, field: CredentialField, value: string): string {
  const sealed = sealWithKey(keyring.keys.get(keyId)!, aad(destinationId, field), Buffer.from(value, 'utf8')).toString('base64');
  return field.kind === 'mappingHeader' ? `${URL_BOUND_MARK}${sealed}` : sealed;
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
  const urlBound = field.kind === 'mappingHeader' && sealed.startsWith(URL_BOUND_MARK);
  const ciphertext = urlBound ? sealed.slice(URL_BOUND_MARK.length) : sealed;
  try {
    return openWithKey(key, aad(destinationId, field, field.kind !== 'mappingHeader' || urlBound), Buffer.from(ciphertext, 'base64')).toString('utf8');
  } catch {
    throw new CredentialSealError(`destination ${destinationId}: its sealed ${credentialFieldName(field)} does not authenticate (altered, or copied from another destination or field)`);
  }
}
