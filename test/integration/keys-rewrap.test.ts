import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { identifierHash, parseKeyring } from '../../src/privacy/keyring';
import { openBody, sealBody } from '../../src/privacy/sealed-body';
import { openStore } from '../../src/store';
import { ROOT } from '../helpers/processes';

/**
 * `npm run keys:rewrap`, the rotation runbook's step that lets an old master key go (docs/privacy.md):
 * a body sealed before the rotation still opens with only the new master key listed, and so do a
 * destination's credentials (they are re-sealed under the new key) and an
 * operational endpoint's signing secret.
 */
const run = promisify(execFile);
const k1 = `k1=${Buffer.alloc(32, 1).toString('base64')}`;
const k2 = `k2=${Buffer.alloc(32, 2).toString('base64')}`;
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-rewrap-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const rewrap = (env: Record<string, string>) =>
  run(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts/rewrap-data-keys.ts')], { cwd: ROOT, env: { PATH: process.env.PATH, DATABASE_PATH: path.join(dir, 'store.db'), ...env } }).then(
    ({ stdout }) => ({ code: 0, stdout }),
    (err: { code: number; stdout: string; stderr: string }) => ({ code: err.code, stdout: `${err.stdout}${err.stderr}` }),
  );

it('re-wraps every data key and re-seals every credential under the active master key; the old one can then be removed and both still open', async () => {
  const before = parseKeyring(k1);
  const subject = identifierHash(before, 'userId', 'rotated "user" \\ zoë');
  const store = await openStore({ databasePath: path.join(dir, 'store.db'), keyring: before });
  const body = { type: 'track' as const, messageId: 'm-1', userId: 'rotated "user" \\ zoë', event: 'Before Rotation' };
  const credentials = { enabled: true, sharedSecret: 'shared secret before rotation', webhooks: [{ url: 'https://hooks.example.com/r', headers: { 'X-Key': 'header value before rotation' } }] };
  let sealed;
  let destinationId: string;
  let endpointId: string;
  try {
    const key = (await store.dataKeys.getOrCreate([subject])).get(subject)!;
    sealed = sealBody(key, subject, body.messageId, body);
    destinationId = (await store.destinations.create((await store.sources.create('rotation')).source.id, credentials)).id;
    endpointId = (await store.operationalEndpoints.create({ url: 'https://ops.example.com/hook', eventTypes: [], format: 'standard', enabled: true }, 'endpoint secret before rotation')).id;
  } finally {
    await store.close();
  }

  const done = await rewrap({ PAYLOAD_KEYS: `${k1},${k2}`, PAYLOAD_ACTIVE_KEY: 'k2', PAYLOAD_HASH_KEY: 'k1' });
  expect(done).toMatchObject({ code: 0 });
  expect(done.stdout).toContain('re-wrapped 1 data key(s) under "k2"; data keys per master key now: {"k2":1}');
  expect(done.stdout).toContain('re-sealed the credentials of 1 destination(s) under "k2"; destinations per master key now: {"k2":1}');
  expect(done.stdout).toContain('re-sealed the secrets of 1 operational endpoint(s) under "k2"; endpoints per master key now: {"k2":1}');
  // Nothing of the keys themselves in what it prints, nor of the credentials.
  expect(done.stdout).not.toContain(Buffer.alloc(32, 1).toString('base64'));
  expect(done.stdout).not.toContain('before rotation');
  const again = await rewrap({ PAYLOAD_KEYS: `${k1},${k2}`, PAYLOAD_ACTIVE_KEY: 'k2', PAYLOAD_HASH_KEY: 'k1' });
  expect(again).toMatchObject({ code: 0, stdout: expect.stringContaining('re-wrapped 0 data key(s)') });
  expect(again.stdout).toContain('re-sealed the credentials of 0 destination(s)');
  expect(again.stdout).toContain('re-sealed the secrets of 0 operational endpoint(s)');

  const retired = await openStore({ databasePath: path.join(dir, 'store.db'), keyring: parseKeyring(`${k2},${k1.replace('k1=', 'hash=')}`, 'k2', 'hash') });
  try {
    expect(openBody((await retired.dataKeys.get(subject))!, body.messageId, sealed)).toEqual(body);
    expect(await retired.destinations.get(destinationId!)).toMatchObject(credentials);
    expect(await retired.operationalEndpoints.secretOf(endpointId!)).toBe('endpoint secret before rotation');
  } finally {
    await retired.close();
  }
});

it('says what is missing instead of re-wrapping with PAYLOAD_ENCRYPTION=off', async () => {
  expect(await rewrap({ PAYLOAD_ENCRYPTION: 'off' })).toMatchObject({ code: 1, stdout: expect.stringContaining('PAYLOAD_ENCRYPTION=off: there are no data keys to re-wrap') });
});
