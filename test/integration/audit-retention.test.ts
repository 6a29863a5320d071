import { sql } from 'kysely';
import { auditRetention } from '../../src/api/audit-retention';
import type { Store } from '../../src/store';
import type { AuditEntry } from '../../src/store/types';
import { createTestDatabase } from '../helpers/postgres';
import { postgresStoreDatabase } from '../helpers/postgres-store-database';
import { waitFor } from '../helpers/processes';
import { sqliteStoreFile } from '../helpers/sqlite-store-file';

/**
 * The audit log's retention path, on both stores: AUDIT_RETENTION deletes rows past it, while the
 * database still refuses any UPDATE, and any DELETE of a row younger than its 90-day floor, whoever asks.
 */
const DAY_MS = 86_400_000;
const entry = (id: string, daysAgo: number): AuditEntry => ({ at: new Date(Date.now() - daysAgo * DAY_MS).toISOString(), actor: { tokenId: null, name: 'ADMIN_TOKEN' }, action: 'source.create', target: id, outcome: 'success', requestId: id, ip: '203.0.113.1', changed: ['name'] });

/**
 * The message a refused statement rejected with. Not `rejects.toThrow`: better-sqlite3's native
 * module is loaded once per Jest process, so its SqliteError comes from the realm of the first test
 * file that loaded it and is no `Error` of this one, which `toThrow` then reads as "did not throw".
 */
const refusal = (statement: Promise<unknown>): Promise<string> =>
  statement.then(
    () => 'not refused',
    (err: unknown) => String((err as { message?: unknown }).message ?? err),
  );

async function attack(store: Store, raw: { deleteYoung(): Promise<unknown>; updateOld(): Promise<unknown> }): Promise<void> {
  for (const [id, daysAgo] of [['old', 400], ['past-floor', 100], ['young', 10], ['now', 0]] as const) await store.audit.append(entry(id, daysAgo));
  expect(await refusal(raw.deleteYoung())).toContain('audit_log is append-only');
  expect(await refusal(raw.updateOld())).toContain('audit_log is append-only');
  // Asking the store to prune into the floor deletes nothing: the statement is refused whole.
  expect(await refusal(store.audit.prune(new Date().toISOString()))).toContain('audit_log is append-only');
  const retention = auditRetention(store.audit, 180 * DAY_MS);
  retention.start();
  try {
    await waitFor(async () => {
      const targets = (await store.audit.list({ limit: 100 })).map((row) => row.target);
      if (targets.includes('old')) throw new Error('the row past AUDIT_RETENTION is still there');
      expect(targets.sort()).toEqual(['now', 'past-floor', 'young']);
    }, 10_000);
  } finally {
    await retention.stop();
  }
}

it('deletes audit rows past AUDIT_RETENTION and refuses to delete a younger row or update any, on SQLite', async () => {
  const file = sqliteStoreFile('audit-retention');
  const store = await file.open();
  const db = file.raw();
  try {
    await attack(store, {
      deleteYoung: () => db.deleteFrom('audit_log').where('target', '=', 'young').execute(),
      updateOld: () => db.updateTable('audit_log').set({ ip: '0.0.0.0' }).where('target', '=', 'old').execute(),
    });
  } finally {
    await store.close();
    await file.close();
  }
}, 60_000);

it('deletes audit rows past AUDIT_RETENTION and refuses to delete a younger row or update any, on PostgreSQL', async () => {
  const database = postgresStoreDatabase(await createTestDatabase('switchyard_audit_retention'));
  const store = await database.open();
  const db = database.raw();
  try {
    await attack(store, {
      deleteYoung: () => sql`delete from audit_log where target = 'young'`.execute(db),
      updateOld: () => db.updateTable('audit_log').set({ ip: '0.0.0.0' }).where('target', '=', 'old').execute(),
    });
  } finally {
    await store.close();
    await database.close();
  }
}, 120_000);
