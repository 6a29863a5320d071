import { openStore } from '../../src/store';
import { describeReplayPage, describeReplayPageReads } from '../helpers/replay-page-cases';
import { testKeyring } from '../helpers/payload-keys';
import { createTestDatabase } from '../helpers/postgres';
import { postgresStoreDatabase } from '../helpers/postgres-store-database';
import { sqliteStoreFile } from '../helpers/sqlite-store-file';

/**
 * A replay page decided with a few batch reads, whatever its size (erased ids,
 * suppressions, data keys, the destination's rules), and the same decisions as ingest makes; on a
 * SQLite file and on PostgreSQL, the same cases.
 */
describe('SQLite', () => {
  const file = sqliteStoreFile('replay-page');
  afterAll(() => file.close());
  describe('store reads', () => describeReplayPageReads(() => file.open(testKeyring())));
  describe('replay page', () => describeReplayPage(async () => ({ store: await file.open(testKeyring()), raw: file.raw })));
});

describe('PostgreSQL', () => {
  let database: ReturnType<typeof postgresStoreDatabase>;
  const url = createTestDatabase('replay_page');
  beforeAll(async () => {
    database = postgresStoreDatabase(await url);
  });
  afterAll(() => database?.close());
  describe('store reads', () => describeReplayPageReads(async () => openStore({ databasePath: '', databaseUrl: await url, keyring: testKeyring() })));
  describe('replay page', () => describeReplayPage(async () => ({ store: await database.open(testKeyring()), raw: () => database.raw() })));
});
