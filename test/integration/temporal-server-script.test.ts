import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../helpers/ports';
import { ROOT } from '../helpers/processes';
import { temporalServerScript } from '../helpers/real-temporal';

/**
 * scripts/temporal-server.sh's throwaway PostgreSQL under a deep directory. A Unix socket path
 * holds at most 107 bytes: CI's checkout plus a test slot's run directory once put
 * "<dir>/pg/.s.PGSQL.<port>" at 108 and PostgreSQL refused to start, failing every test on
 * Temporal's own server. The socket lives in a short directory of its own.
 */
const base = process.env.SWITCHYARD_TEST_DIR ?? path.join(ROOT, '.test-data', `script-${process.pid}`);
const dir = path.join(base, `deep-${'d'.repeat(Math.max(1, 120 - base.length))}`, 'temporal');
let pgPort: number;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  mkdirSync(dir, { recursive: true });
  pgPort = await freePort();
  env = { ...process.env, TEMPORAL_SERVER_DIR: dir, TEMPORAL_PG_PORT: String(pgPort) };
});

afterAll(async () => {
  await temporalServerScript('postgres-stop', env).catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

test('PostgreSQL starts when its data directory is deeper than a Unix socket path can hold', async () => {
  expect(`${dir}/pg/.s.PGSQL.${pgPort}`.length).toBeGreaterThan(107);
  await temporalServerScript('postgres', env);
  // postmaster.pid's fifth line is the socket directory; local connections there are trusted.
  const socketDir = readFileSync(path.join(dir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[4];
  expect(path.join(socketDir, `.s.PGSQL.${pgPort}`).length).toBeLessThanOrEqual(107);
  const client = new pg.Client({ host: socketDir, port: pgPort, user: 'temporal', database: 'postgres' });
  await client.connect();
  try {
    const { rows } = await client.query<{ user: string }>('SELECT current_user AS user');
    expect(rows[0].user).toBe('temporal');
  } finally {
    await client.end();
  }
}, 120_000);
