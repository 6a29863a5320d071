import { createHmac } from 'node:crypto';

/**
 * Named 256-bit master keys. The active key encrypts every new payload; every listed
 * key still decrypts what it once encrypted, so rotation is "add a key and make it active" and an
 * old key leaves the list only when no history still needs it. The hash key (by default the first
 * listed) keys the HMAC of identifiers put in visibility: it must stay the same for as long as old
 * deliveries should be found by user id, so it does not follow the active key.
 */
export interface Keyring {
  readonly activeKeyId: string;
  readonly hashKeyId: string;
  readonly keys: ReadonlyMap<string, Buffer>;
}

/** A key id: short, printable, safe in a payload's metadata and a file name. */
const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * Parses `PAYLOAD_KEYS`: comma- or newline-separated `id=base64` entries (the key 32 bytes, standard
 * or URL-safe base64). Errors name the entry by its id or position, never a key's bytes.
 */
export function parseKeyring(text: string, activeKeyId = '', hashKeyId = ''): Keyring {
  const entries = text.split(/[,\n]/).map((s) => s.trim()).filter((s) => s && !s.startsWith('#'));
  if (entries.length === 0) throw new Error('lists no key; give one or more `id=base64` entries of 32-byte keys');
  const keys = new Map<string, Buffer>();
  entries.forEach((entry, index) => {
    const eq = entry.indexOf('=');
    const id = eq > 0 ? entry.slice(0, eq).trim() : '';
    if (!KEY_ID.test(id)) throw new Error(`entry ${index + 1} is not \`id=base64\` with an id of letters, digits, ".", "_" or "-" (at most 64)`);
    if (keys.has(id)) throw new Error(`key "${id}" is listed twice`);
    const encoded = entry.slice(eq + 1).trim();
    const key = Buffer.from(encoded, 'base64');
    if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(encoded) || key.length !== 32) throw new Error(`key "${id}" is not 32 bytes in base64 (generate one with \`openssl rand -base64 32\`)`);
    keys.set(id, key);
  });
  const ids = [...keys.keys()];
  const active = activeKeyId || ids[ids.length - 1];
  const hash = hashKeyId || ids[0];
  if (!keys.has(active)) throw new Error(`the active key "${active}" is not listed (listed: ${ids.join(', ')})`);
  if (!keys.has(hash)) throw new Error(`the hash key "${hash}" is not listed (listed: ${ids.join(', ')})`);
  return { activeKeyId: active, hashKeyId: hash, keys };
}

/**
 * What an identifier is, hashed apart: user and anonymous ids in visibility, Personas profile ids in
 * message ids, and `erasedId` for the erased-id list (any id a regulation erased, whatever its kind).
 */
/** `eventName`: a fate row's event, searched by its keyed hash as ids are (an event name is payload). */
export type IdentifierKind = 'userId' | 'anonymousId' | 'profileId' | 'erasedId' | 'eventName';

/** What a keyed identifier hash says it is, so a reader of visibility can tell it from an id. */
export const IDENTIFIER_HASH_PREFIX = 'h1_';

/**
 * A keyed hash (HMAC-SHA256 under the hash key, truncated to 128 bits, base64url) of an identifier
 * of one kind: what visibility, workflow ids and regulation records carry instead of the id.
 * Without the key nobody can confirm a guessed id against it; with it, a search hashes its query.
 * The kind separates namespaces (a userId and an anonymousId that are equal strings hash apart).
 */
export function identifierHash(keyring: Keyring, kind: IdentifierKind, id: string): string {
  const mac = createHmac('sha256', keyring.keys.get(keyring.hashKeyId)!).update(kind).update('\0').update(id, 'utf8').digest();
  return IDENTIFIER_HASH_PREFIX + mac.subarray(0, 16).toString('base64url');
}
