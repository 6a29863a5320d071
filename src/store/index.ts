import type { Kysely } from 'kysely';
import { connectPostgres, connectSqlite, postgresPool, redactDatabaseUrl } from './connection';
import { destinationStore } from './destinations';
import { migrateToLatest } from './migrations';
import { personasStore } from './personas';
import { erasureStore } from './erasures';
import { regulationStore } from './regulations';
import { sourceUserStore } from './source-users';
import { sourceStore } from './sources';
import type { Tables } from './tables';
import type { Store } from './types';

export type { Destination, DestinationPatch, NewDestination, Regulation, SeenUser, Source, Store, Webhook } from './types';

export interface StoreOptions {
  /** SQLite file; created (with its folder) when missing. Config: DATABASE_PATH. */
  databasePath: string;
  /** `postgres://…`: PostgreSQL instead of the SQLite file. Config: DATABASE_URL. */
  databaseUrl?: string;
}

/** Opens the settings store and brings its schema up to date; every process calls this at start-up. */
export async function openStore(options: StoreOptions): Promise<Store> {
  const db = options.databaseUrl ? await openPostgres(options.databaseUrl) : connectSqlite(options.databasePath);
  try {
    await migrateToLatest(db);
  } catch (err) {
    await db.destroy();
    throw err;
  }
  return {
    sources: sourceStore(db),
    destinations: destinationStore(db),
    regulations: regulationStore(db),
    sourceUsers: sourceUserStore(db),
    erasures: erasureStore(db),
    personas: personasStore(db),
    close: () => db.destroy(),
  };
}

/** Fails at start-up, naming the server (never the password), when PostgreSQL cannot be reached. */
async function openPostgres(databaseUrl: string): Promise<Kysely<Tables>> {
  const pool = postgresPool(databaseUrl);
  try {
    const client = await pool.connect();
    client.release();
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw new Error(`PostgreSQL at ${redactDatabaseUrl(databaseUrl)} not reachable: ${(err as Error).message}`);
  }
  return connectPostgres(pool);
}
