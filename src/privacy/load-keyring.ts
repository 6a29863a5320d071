import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config';
import { parseKeyring, type Keyring } from './keyring';

/** Where `npm start` keeps its development key when the operator gave none. */
export const DEV_KEYS_FILE = 'payload-keys';

type KeyringSettings = Pick<Config, 'payloadEncryption' | 'payloadKeys' | 'payloadKeysFile' | 'payloadActiveKey' | 'payloadHashKey' | 'dataDir'>;

/**
 * The keyring of this process, or undefined when `PAYLOAD_ENCRYPTION=off`. Without keys it fails,
 * naming the variables, unless `createInDataDir` (only `npm start`): then it creates a development
 * key under `$DATA_DIR` on the first start and keeps using it, so the quick start needs no setup.
 */
export function loadKeyring(config: KeyringSettings, options: { createInDataDir?: boolean } = {}): Keyring | undefined {
  if (!config.payloadEncryption) return undefined;
  const from = (text: string, variable: string) => {
    try {
      return parseKeyring(text, config.payloadActiveKey, config.payloadHashKey);
    } catch (err) {
      throw new Error(`Invalid ${variable}: ${(err as Error).message}`);
    }
  };
  if (config.payloadKeys && config.payloadKeysFile) throw new Error('Invalid PAYLOAD_KEYS_FILE: set PAYLOAD_KEYS or PAYLOAD_KEYS_FILE, not both');
  if (config.payloadKeys) return from(config.payloadKeys, 'PAYLOAD_KEYS');
  if (config.payloadKeysFile) return from(readKeysFile(config.payloadKeysFile, 'PAYLOAD_KEYS_FILE'), 'PAYLOAD_KEYS_FILE');
  if (options.createInDataDir) {
    const file = path.join(config.dataDir, DEV_KEYS_FILE);
    if (!existsSync(file)) {
      mkdirSync(config.dataDir, { recursive: true });
      writeFileSync(file, `# Development payload key made by npm start; see docs/privacy.md before production.\ndev-1=${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
    }
    return from(readKeysFile(file, file), file);
  }
  throw new Error('No payload keys: set PAYLOAD_KEYS (comma-separated `id=base64` 32-byte keys, e.g. `k1=$(openssl rand -base64 32)`) or PAYLOAD_KEYS_FILE; PAYLOAD_ENCRYPTION=off runs without encryption (docs/privacy.md)');
}

function readKeysFile(file: string, variable: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`Invalid ${variable}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
}
