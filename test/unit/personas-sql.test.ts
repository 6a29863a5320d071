import type { Kysely } from 'kysely';
import type { Tables } from '../../src/store/tables';
import { memoryDatabase } from '../helpers/memory-db';
import { describeAudiencesAndComputedTraits, seedPersonas } from '../helpers/personas-sql-cases';

/**
 * The audience and computed-trait compilers' output run by SQLite itself (in memory, on the real
 * schema). The same tables run on PostgreSQL in test/integration/personas-postgres.test.ts.
 */
let db: Kysely<Tables>;

beforeAll(async () => {
  ({ db } = await memoryDatabase());
  await seedPersonas(db);
});
afterAll(async () => {
  await db.destroy();
});

describeAudiencesAndComputedTraits(() => db);
