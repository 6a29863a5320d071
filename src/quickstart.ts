import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Store } from './store/types';

interface Quickstart {
  adminToken: string;
  sourceId: string;
  writeKey: string;
}

/**
 * `npm start` on embedded defaults needs a ready admin token and write key. They are generated on
 * the first start and kept (owner-only) in the data folder so every restart prints the same ones;
 * write keys are stored hashed, so this file is the only place this one can be read back from.
 */
export async function loadQuickstart(dataDir: string, store: Store, adminTokenFromEnv: string): Promise<Quickstart> {
  const file = path.join(dataDir, 'quickstart.json');
  if (existsSync(file)) {
    const saved = JSON.parse(readFileSync(file, 'utf8')) as Quickstart;
    if (await store.sources.get(saved.sourceId)) return { ...saved, adminToken: adminTokenFromEnv || saved.adminToken };
  }
  const { source, writeKey } = await store.sources.create('Quick start source');
  const quickstart = { adminToken: adminTokenFromEnv || randomBytes(24).toString('base64url'), sourceId: source.id, writeKey };
  writeFileSync(file, JSON.stringify(quickstart, null, 2), { mode: 0o600 });
  return quickstart;
}
