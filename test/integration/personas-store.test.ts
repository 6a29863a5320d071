import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openStore } from '../../src/store';
import { describePersonasStore } from '../helpers/personas-store-cases';

/**
 * The Personas store on a real SQLite file, opened like the API and the worker open it (used one
 * after the other here: better-sqlite3 is synchronous, so two connections of one process waiting
 * on each other's lock would block each other's event loop). The same cases run on PostgreSQL in
 * personas-postgres.test.ts.
 */
const dir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-personas-'));

describePersonasStore(() => openStore({ databasePath: path.join(dir, 'switchyard.db') }));

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});
