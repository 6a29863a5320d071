import type { Kysely } from 'kysely';
import type { Tables } from '../../src/store/tables';
import { memoryDatabase } from '../helpers/memory-db';
import { describeSnapshotDiff, seedSnapshotProfiles } from '../helpers/personas-sql-cases';

/**
 * The Personas diff run by SQLite itself (in memory, on the real schema; one connection, so the
 * TEMP staging table stays), as the store runs it. The same table runs on PostgreSQL in
 * test/integration/personas-postgres.test.ts.
 */
let db: Kysely<Tables>;

beforeAll(async () => {
  ({ db } = await memoryDatabase());
  await seedSnapshotProfiles(db);
});
afterAll(async () => {
  await db.destroy();
});

describeSnapshotDiff(() => db);
