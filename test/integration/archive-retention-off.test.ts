import { archiveRetention } from '../../src/api/archive-retention';
import type { Store } from '../../src/store';
import { archivePartitions } from '../../src/store/message-archive-table';
import { createTestDatabase } from '../helpers/postgres';
import { postgresStoreDatabase } from '../helpers/postgres-store-database';
import { waitFor } from '../helpers/processes';
import { sqliteStoreFile } from '../helpers/sqlite-store-file';

/**
 * ARCHIVE_RETENTION=0 is "keeps nothing", so the archive an earlier run (with a
 * retention) wrote goes when a process starts with 0, on both stores; before, the sweep never ran.
 */
const DAY_MS = 86_400_000;
const EVERYTHING = { since: '1970-01-01T00:00:00.000Z', until: '2100-01-01T00:00:00.000Z' };

async function archiveOfAnEarlierRun(store: Store): Promise<string> {
  const { source } = await store.sources.create('archived before ARCHIVE_RETENTION=0');
  const now = Date.now();
  const message = (messageId: string, daysAgo: number) => ({ sourceId: source.id, messageId, type: 'track' as const, receivedAt: new Date(now - daysAgo * DAY_MS).toISOString(), call: { type: 'track' as const, message: { type: 'track' as const, messageId } } });
  await store.archive.add([message('three-days-ago', 3), message('yesterday', 1), message('just-now', 0)]);
  expect((await store.archive.page(source.id, EVERYTHING, 10)).messages).toHaveLength(3);
  return source.id;
}

async function expectPurgedAtStart(store: Store, sourceId: string): Promise<void> {
  const retention = archiveRetention(store.archive, 0);
  retention.start();
  try {
    await waitFor(async () => {
      const left = (await store.archive.page(sourceId, EVERYTHING, 10)).messages.length;
      if (left > 0) throw new Error(`${left} archived messages left`);
    }, 15_000);
  } finally {
    await retention.stop();
  }
}

it('removes the archive an earlier run wrote when ARCHIVE_RETENTION=0 starts, on SQLite', async () => {
  const file = sqliteStoreFile('archive-off');
  const store = await file.open();
  try {
    await expectPurgedAtStart(store, await archiveOfAnEarlierRun(store));
  } finally {
    await store.close();
    await file.close();
  }
}, 60_000);

it('removes the archive an earlier run wrote when ARCHIVE_RETENTION=0 starts, on PostgreSQL: past days dropped, today deleted', async () => {
  const db = postgresStoreDatabase(await createTestDatabase('switchyard_archive_off'));
  const store = await db.open();
  try {
    const sourceId = await archiveOfAnEarlierRun(store);
    await expectPurgedAtStart(store, sourceId);
    const today = Math.floor(Date.now() / DAY_MS);
    expect((await archivePartitions(db.raw())).filter((p) => p.day < today)).toEqual([]);
  } finally {
    await store.close();
    await db.close();
  }
}, 120_000);
