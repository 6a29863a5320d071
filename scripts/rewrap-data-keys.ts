/**
 * After a master-key rotation (docs/privacy.md, "Rotating the key"): re-wraps every data key still
 * wrapped under an older master key with the active one, so the older key can be retired once no
 * Temporal history needs it either. Safe while Switchyard runs, and to run again: each row is
 * rewritten only as it was read (a regulation's destroy meanwhile stays done).
 *
 *   npm run keys:rewrap     (with the processes' own DATABASE_URL / DATABASE_PATH and PAYLOAD_KEYS)
 */
import { loadConfig } from '../src/config';
import { loadKeyring } from '../src/privacy/load-keyring';
import { openStore } from '../src/store';

const BATCH = 500;

async function main(): Promise<void> {
  const config = loadConfig();
  const keyring = loadKeyring(config);
  if (!keyring) throw new Error('PAYLOAD_ENCRYPTION=off: there are no data keys to re-wrap');
  const store = await openStore({ ...config, keyring });
  try {
    console.log(`data keys per master key before: ${JSON.stringify(await store.dataKeys.countByMasterKey())}; active: ${keyring.activeKeyId}`);
    let total = 0;
    for (;;) {
      const { rewrapped, left } = await store.dataKeys.rewrap(BATCH);
      total += rewrapped;
      if (!left) break;
    }
    const after = await store.dataKeys.countByMasterKey();
    console.log(`re-wrapped ${total} data key(s) under "${keyring.activeKeyId}"; data keys per master key now: ${JSON.stringify(after)}`);
    const others = Object.keys(after).filter((id) => id !== keyring.activeKeyId);
    // A process still making keys under an old active key (a roll not finished) leaves some behind.
    if (others.length > 0) {
      console.error(`still wrapped under ${others.join(', ')}: finish rolling PAYLOAD_ACTIVE_KEY=${keyring.activeKeyId} to every process, then run this again`);
      process.exitCode = 1;
    }
  } finally {
    await store.close();
  }
}

main().catch((err: unknown) => {
  console.error((err as Error).message);
  process.exit(1);
});
