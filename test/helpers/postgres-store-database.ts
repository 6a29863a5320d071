import type { Kysely } from 'kysely';
import type { Keyring } from '../../src/privacy/keyring';
import { openStore, type Store } from '../../src/store';
import { connectPostgres, postgresPool } from '../../src/store/connection';
import type { Tables } from '../../src/store/tables';

/** A test's PostgreSQL database at `url`: store handles as a process opens them, and raw Kysely handles; `close` destroys the raw ones. */
export function postgresStoreDatabase(url: string) {
  const raws: Kysely<Tables>[] = [];
  return {
    open: (keyring?: Keyring): Promise<Store> => openStore({ databasePath: '', databaseUrl: url, keyring }),
    raw: (): Kysely<Tables> => {
      const db = connectPostgres(postgresPool(url));
      raws.push(db);
      return db;
    },
    close: async (): Promise<void> => {
      for (const db of raws) await db.destroy();
    },
  };
}
