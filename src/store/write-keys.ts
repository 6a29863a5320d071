import { createHash, randomBytes } from 'node:crypto';

/** 24 random bytes are 32 url-safe base64 characters: the length of a Segment write key. */
const WRITE_KEY_BYTES = 24;
const HINT_LENGTH = 4;

export function newWriteKey(): string {
  return randomBytes(WRITE_KEY_BYTES).toString('base64url');
}

/**
 * Write keys are stored only as this digest, so a copy of the database file cannot be used to
 * send events. A fast unsalted hash is enough here: the keys are 192 random bits, not passwords,
 * and the lookup on every ingest request must use an index.
 */
export function hashWriteKey(writeKey: string): string {
  return createHash('sha256').update(writeKey, 'utf8').digest('hex');
}

/** The last characters, shown in listings so operators can tell keys apart without seeing them. */
export function writeKeyHint(writeKey: string): string {
  return writeKey.slice(-HINT_LENGTH);
}
