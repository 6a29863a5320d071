import { randomBytes } from 'node:crypto';
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

/** Data keys in memory, made on first ask, as the store's getOrCreate makes them (`table`: every key made). */
export function memoryDataKeys() {
  const table = new Map<string, Buffer>();
  return {
    table,
    async getOrCreate(subjects: string[]) {
      for (const subject of subjects) if (!table.has(subject)) table.set(subject, randomBytes(32));
      return new Map(subjects.map((subject) => [subject, table.get(subject)!] as const));
    },
  };
}
