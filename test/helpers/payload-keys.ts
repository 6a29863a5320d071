import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseKeyring, type Keyring } from '../../src/privacy/keyring';

/**
 * The one committed test key: every process of a test run (the run's worker, each
 * test's API, spawned workers and APIs, replayed histories) encrypts and decrypts with it, so a
 * history written by one is read by the others. Test-only: it is public.
 */
export const TEST_PAYLOAD_KEYS_FILE = path.resolve(__dirname, '../fixtures/payload-keys');

/** The same keys as `PAYLOAD_KEYS` text, for a process started with an env of its own. */
export const TEST_PAYLOAD_KEYS = readFileSync(TEST_PAYLOAD_KEYS_FILE, 'utf8')
  .split('\n')
  .filter((line) => line.trim() && !line.startsWith('#'))
  .join(',');

export const testKeyring = (): Keyring => parseKeyring(TEST_PAYLOAD_KEYS);
