import { connectSqlite } from './connection';
import { destinationStore } from './destinations';
import { migrateToLatest } from './migrations';
import { personasStore } from './personas';
import { erasureStore } from './erasures';
import { regulationStore } from './regulations';
import { sourceUserStore } from './source-users';
import { sourceStore } from './sources';
import type { Store } from './types';

export type { Destination, DestinationPatch, NewDestination, Regulation, SeenUser, Source, Store, Webhook } from './types';

export interface StoreOptions {
  /** SQLite file; created (with its folder) when missing. Config: DATABASE_PATH. */
  databasePath: string;
}

/** Opens the settings store and brings its schema up to date; every process calls this at start-up. */
export async function openStore(options: StoreOptions): Promise<Store> {
  const db = connectSqlite(options.databasePath);
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
