import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { erasedSubjects } from '../../src/privacy/subjects';
import { ADMIN_TOKEN, startSystem, type TestSystem } from '../helpers/system';

/**
 * On SQLite, the rows a DELETE regulation deletes must not stay readable in the
 * store's files. `secure_delete` overwrites them in the database pages, but in WAL mode the pages
 * that held them were first written to `-wal`, and those frames stay there, readable with `strings`,
 * until a checkpoint truncates the log. The test reads the files' bytes, as someone with a copy of
 * the data folder would.
 */

let dir: string;
let system: TestSystem;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-wal-'));
  // A store file of its own: no other process has it open, so only this test's writes are in it.
  system = await startSystem({ databasePath: path.join(dir, 'switchyard.db') });
});
afterAll(async () => {
  await system?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Which of the store's files (`.db`, `.db-wal`) hold these bytes. */
function filesHolding(text: string): string[] {
  const needle = Buffer.from(text, 'utf8');
  return ['', '-wal']
    .map((suffix) => system.config.databasePath + suffix)
    .filter((file) => existsSync(file) && readFileSync(file).includes(needle))
    .map((file) => path.basename(file));
}

function wrappedDataKeys(subjects: string[]): string[] {
  const db = new Database(system.config.databasePath, { readonly: true });
  try {
    return subjects.map((subject) => (db.prepare('select wrapped_key from data_keys where subject_hash = ?').get(subject) as { wrapped_key: string }).wrapped_key);
  } finally {
    db.close();
  }
}

it("leaves a DELETE regulation's users readable in neither the database file nor its write-ahead log", async () => {
  const userId = `wal-user-${process.pid}-${Date.now().toString(36)}`;
  const anonymousId = `${userId}-device`;
  const { source } = await system.store.sources.create('wal');
  // A profile with traits, an event, the source having seen the user and the device id, and the user's data keys.
  await system.store.personas.profiles.record(
    source.id,
    [{ type: 'identify', userId, anonymousId, traits: { email: `${userId}@example.com` } }],
    [{ userId, linkedIds: [anonymousId] }],
    new Date().toISOString(),
  );
  const subjects = erasedSubjects(system.keyring!, [userId]);
  await system.store.dataKeys.getOrCreate(subjects);
  // The wrapped keys: with the master key, a copy of one opens every body sealed under it.
  const wrappedKeys = wrappedDataKeys(subjects);
  expect(wrappedKeys).toHaveLength(subjects.length);
  expect(filesHolding(userId)).toContain('switchyard.db-wal');

  const response = await system.app.inject({
    method: 'POST',
    url: '/admin/regulations',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    payload: { regulationType: 'DELETE', subjectType: 'USER_ID', subjectIds: [userId] },
  });
  expect(response.statusCode).toBe(201);

  expect(filesHolding(userId)).toEqual([]);
  expect(filesHolding(anonymousId)).toEqual([]);
  for (const wrapped of wrappedKeys) expect(filesHolding(wrapped)).toEqual([]);
  expect(await system.store.personas.profiles.get(source.id, userId)).toBeUndefined();
});
