import { identifierHash, IDENTIFIER_HASH_PREFIX, type IdentifierKind, type Keyring } from './keyring';

/**
 * What Temporal's visibility, workflow ids and regulation records carry for an identifier: its
 * keyed hash, or the id itself when PAYLOAD_ENCRYPTION=off (no keyring) on purpose. One function,
 * so a writer and a searcher of the same attribute can never disagree on the form.
 */
export function visibleId(keyring: Keyring | undefined, kind: IdentifierKind, id: string): string {
  return keyring ? identifierHash(keyring, kind, id) : id;
}

/** Whether a value read back from visibility is a keyed hash rather than an id written in plaintext (before keys, or with encryption off). */
export function isIdentifierHash(value: string): boolean {
  return HASH_SHAPE.test(value);
}

/** The prefix and 128 bits in base64url (identifierHash). */
const HASH_SHAPE = new RegExp(`^${IDENTIFIER_HASH_PREFIX}[A-Za-z0-9_-]{22}$`);
