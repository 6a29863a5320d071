import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import type { Keyring } from '../../src/privacy/keyring';
import { openStore, type Store } from '../../src/store';
import { connectSqlite } from '../../src/store/connection';
import type { Tables } from '../../src/store/tables';

/**
 * A SQLite store file of a test's own, in a fresh temporary folder: store handles as a process
 * opens them, raw Kysely handles for rows the Store interface does not show, and every byte SQLite
 * has written for it (the file and its WAL). `close` destroys the raw handles and the folder.
 */
export function sqliteStoreFile(prefix: string) {
  const dir = mkdtempSync(path.join(os.tmpdir(), `switchyard-${prefix}-`));
  const file = path.join(dir, 'switchyard.db');
  const raws: Kysely<Tables>[] = [];
  return {
    file,
    open: (keyring?: Keyring): Promise<Store> => openStore({ databasePath: file, keyring }),
    raw: (): Kysely<Tables> => {
      const db = connectSqlite(file);
      raws.push(db);
      return db;
    },
    fileBytes: (): Buffer => Buffer.concat([file, `${file}-wal`].filter(existsSync).map((f) => readFileSync(f))),
    close: async (): Promise<void> => {
      for (const db of raws) await db.destroy();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
