/**
 * After a master-key rotation (docs/privacy.md, "Rotating the key"): re-wraps every data key still
 * wrapped under an older master key with the active one, and seals every destination's receiver
 * credentials and every operational endpoint's signing secret still under an older key (or
 * plaintext) again under it, so the older key can be retired once no Temporal history needs it
 * either. Safe while Switchyard runs, and to run again:
 * each row is rewritten only as it was read (a regulation's destroy, an admin write meanwhile, stays).
 *
 *   npm run keys:rewrap     (with the processes' own DATABASE_URL / DATABASE_PATH and PAYLOAD_KEYS)
 */
import { loadConfig } from '../src/config';
import { loadKeyring } from '../src/privacy/load-keyring';
import { openStore } from '../src/store';

const BATCH = 500;

/** Calls a batch step until it finds nothing left to do; resolves how many rows it changed in all. */
async function inBatches<R extends { left: boolean }>(step: () => Promise<R>, changed: (result: R) => number): Promise<number> {
  let total = 0;
  for (;;) {
    const result = await step();
    total += changed(result);
    if (!result.left) return total;
  }
}

async function main(): Promise<void> {
  const config = loadConfig();
  const keyring = loadKeyring(config);
  if (!keyring) throw new Error('PAYLOAD_ENCRYPTION=off: there are no data keys to re-wrap and no credentials to re-seal');
  const store = await openStore({ ...config, keyring });
  try {
    console.log(`data keys per master key before: ${JSON.stringify(await store.dataKeys.countByMasterKey())}; active: ${keyring.activeKeyId}`);
    const rewrapped = await inBatches(() => store.dataKeys.rewrap(BATCH), (r) => r.rewrapped);
    const dataKeys = await store.dataKeys.countByMasterKey();
    console.log(`re-wrapped ${rewrapped} data key(s) under "${keyring.activeKeyId}"; data keys per master key now: ${JSON.stringify(dataKeys)}`);

    console.log(`destinations' credentials per master key before: ${JSON.stringify(await store.destinations.credentialsByMasterKey())}`);
    const resealed = await inBatches(() => store.destinations.resealCredentials(BATCH), (r) => r.resealed);
    const credentials = await store.destinations.credentialsByMasterKey();
    console.log(`re-sealed the credentials of ${resealed} destination(s) under "${keyring.activeKeyId}"; destinations per master key now: ${JSON.stringify(credentials)}`);

    console.log(`operational endpoints' secrets per master key before: ${JSON.stringify(await store.operationalEndpoints.secretsByMasterKey())}`);
    const resealedSecrets = await inBatches(() => store.operationalEndpoints.resealSecrets(BATCH), (r) => r.resealed);
    const secrets = await store.operationalEndpoints.secretsByMasterKey();
    console.log(`re-sealed the secrets of ${resealedSecrets} operational endpoint(s) under "${keyring.activeKeyId}"; endpoints per master key now: ${JSON.stringify(secrets)}`);

    const others = [...new Set([...Object.keys(dataKeys), ...Object.keys(credentials), ...Object.keys(secrets)])].filter((id) => id !== keyring.activeKeyId);
    // A process still writing under an old active key (a roll not finished), or without keys, leaves some behind.
    if (others.length > 0) {
      console.error(`still under ${others.join(', ')}: finish rolling PAYLOAD_ACTIVE_KEY=${keyring.activeKeyId} (and the keys) to every process, then run this again`);
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
