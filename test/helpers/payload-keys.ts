import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { DataConverter, LoadedDataConverter } from '@temporalio/common';
import { loadDataConverter } from '@temporalio/common/lib/internal-non-workflow';
import { parseKeyring, type Keyring } from '../../src/privacy/keyring';
import { switchyardDataConverter } from '../../src/temporal/data-converter';

/**
 * The one committed test key (issue 19): every process of a test run (the run's worker, each
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

/** What a test's own Client needs to read and write what the run's processes do. */
export const testDataConverter = (): DataConverter => switchyardDataConverter(testKeyring());

/** The same, loaded: what `client.options.loadedDataConverter` is, for reading a recorded history. */
export const testLoadedDataConverter = (): LoadedDataConverter => loadDataConverter(testDataConverter());
