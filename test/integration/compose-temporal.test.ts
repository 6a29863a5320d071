import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { openStore } from '../../src/store';
import { loadCompose, type ComposeService } from '../helpers/compose';
import { freePort } from '../helpers/ports';
import { startPostgres, type PostgresServer } from '../helpers/postgres';
import { ROOT, stopProcess, waitFor } from '../helpers/processes';
import { ensureRealTemporal, freeTemporalPort } from '../helpers/real-temporal';
import { startCarryingEverySearchAttribute } from '../helpers/search-attribute-start';

/**
 * docker-compose.yml's Temporal side, run without Docker on the binaries the images hold (same
 * release, built by scripts/temporal-server.sh): the PostgreSQL init script, the temporal-schema
 * service's commands, the temporal service's environment (the server's embedded config template,
 * as the temporalio/server image starts it), its healthcheck URL, and the temporal-namespace
 * service's commands — each read from the compose file, only host names, ports and in-image paths
 * mapped to this machine. Then the API's DATABASE_URL role migrates Switchyard's store.
 */
const run = promisify(execFile);
const compose = loadCompose(ROOT);
const service = (name: string): ComposeService => compose.services[name];
const pinned = compose.services.temporal.image!.split(':')[1];

let dir: string;
let postgres: PostgresServer;
let server: ChildProcess | undefined;
let grpcPort: number;
let httpPort: number;
let bin: string;

/** Runs a one-shot service's entrypoint and command with its environment and this machine's tools first on PATH. */
async function runOneShot(name: string, env: Record<string, string>, map: (script: string) => string): Promise<string> {
  const { entrypoint, command } = service(name);
  const [shell, ...flags] = entrypoint!;
  const { stdout, stderr } = await run(shell, [...flags, map(command![0])], { env: { PATH: `${bin}:${process.env.PATH}`, HOME: dir, ...service(name).environment, ...env }, timeout: 180_000 });
  return stdout + stderr;
}

beforeAll(async () => {
  dir = path.join(ROOT, '.test-data', `compose-temporal-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  bin = path.join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  const serverBinary = await ensureRealTemporal();
  // The names the admin-tools and server images give these binaries.
  symlinkSync(path.join(path.dirname(serverBinary), 'sql'), path.join(bin, 'temporal-sql-tool'));
  symlinkSync(serverBinary, path.join(bin, 'temporal-server'));
  symlinkSync(execFileSync('bash', [path.join(ROOT, 'scripts/temporal-dev.sh'), 'ensure'], { encoding: 'utf8' }).trim(), path.join(bin, 'temporal'));
  postgres = await startPostgres(path.join(dir, 'postgres'), await freePort());
}, 30 * 60_000);

afterAll(async () => {
  await stopProcess(server);
  await postgres?.stop();
  // Its data directory is most of the 80 MB this test writes; the logs stay.
  if (postgres) rmSync(path.join(dir, 'postgres', 'pg'), { recursive: true, force: true });
});

it('creates the Temporal and Switchyard roles and the switchyard database with the init script', async () => {
  // The throwaway server comes with the role `temporal`; the postgres image starts with none.
  const socket = postgres.socketDir;
  const superuser = { PGHOST: socket, PGPORT: String(postgres.port), PGUSER: 'postgres' };
  await run('psql', ['-v', 'ON_ERROR_STOP=1', '-d', 'postgres', '-c', 'DROP ROLE temporal'], { env: { ...process.env, ...superuser } });
  const volume = service('postgresql').volumes!.find((v) => v.includes('/docker-entrypoint-initdb.d/'))!;
  await run('sh', [path.join(ROOT, volume.split(':')[0])], { env: { PATH: process.env.PATH, ...service('postgresql').environment, ...superuser, POSTGRES_USER: 'postgres' } });
  const temporal = new pg.Client({ connectionString: `postgres://temporal:${service('temporal').environment!.POSTGRES_PWD}@127.0.0.1:${postgres.port}/postgres` });
  await temporal.connect();
  const { rows } = await temporal.query('SELECT rolcreatedb FROM pg_roles WHERE rolname = current_user');
  await temporal.end();
  expect(rows).toEqual([{ rolcreatedb: true }]);
}, 60_000);

it("migrates Temporal's two databases with the temporal-schema service's temporal-sql-tool commands, twice (every `up` runs it)", async () => {
  const schemaDir = path.join(execFileSync('go', ['env', 'GOMODCACHE'], { encoding: 'utf8' }).trim(), `go.temporal.io/server@v${pinned}`, 'schema');
  const map = (script: string) => script.replace('--ep postgresql -p 5432', `--ep 127.0.0.1 -p ${postgres.port}`).replaceAll('/etc/temporal/schema', schemaDir);
  for (let i = 0; i < 2; i++) await runOneShot('temporal-schema', {}, map);
  const client = new pg.Client({ connectionString: `${postgres.url.replace('temporal:temporal', `temporal:${service('temporal').environment!.POSTGRES_PWD}`)}/temporal` });
  await client.connect();
  const { rows } = await client.query('SELECT curr_version FROM schema_version');
  await client.end();
  expect(rows[0].curr_version).toMatch(/^1\.\d+$/);
}, 360_000);

it('starts the Temporal server from the temporal service environment, healthy by its healthcheck URL', async () => {
  grpcPort = await freeTemporalPort();
  httpPort = grpcPort + 10;
  const env = {
    ...service('temporal').environment,
    POSTGRES_SEEDS: '127.0.0.1',
    DB_PORT: String(postgres.port),
    // In the container 0.0.0.0 (other containers reach it); here loopback.
    BIND_ON_IP: '127.0.0.1',
    DYNAMIC_CONFIG_FILE_PATH: path.join(ROOT, service('temporal').volumes!.find((v) => v.includes(service('temporal').environment!.DYNAMIC_CONFIG_FILE_PATH))!.split(':')[0]),
    // The template's fixed ports, moved to a free block (the same layout as scripts/temporal-server.sh).
    FRONTEND_GRPC_PORT: String(grpcPort),
    HISTORY_GRPC_PORT: String(grpcPort + 1),
    MATCHING_GRPC_PORT: String(grpcPort + 2),
    WORKER_GRPC_PORT: String(grpcPort + 6),
    FRONTEND_HTTP_PORT: String(httpPort),
    FRONTEND_MEMBERSHIP_PORT: String(grpcPort - 300),
    HISTORY_MEMBERSHIP_PORT: String(grpcPort - 299),
    MATCHING_MEMBERSHIP_PORT: String(grpcPort - 298),
    WORKER_MEMBERSHIP_PORT: String(grpcPort - 294),
  };
  // The image's entrypoint: `temporal-server start`, no config file, so the embedded template.
  server = spawn(path.join(bin, 'temporal-server'), ['start'], { env: { PATH: process.env.PATH, HOME: dir, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const log = createWriteStream(path.join(dir, 'temporal-server.log'));
  server.stdout?.pipe(log);
  server.stderr?.pipe(log);
  const healthcheck = service('temporal').healthcheck!.test.find((arg) => arg.startsWith('http://'))!;
  const url = healthcheck.replace(':7243/', `:${httpPort}/`);
  const info = await waitFor(async () => {
    const response = await fetch(url);
    if (!response.ok) throw new Error(`${url}: ${response.status}`);
    return response.json() as Promise<{ serverVersion: string }>;
  }, 120_000, () => server!.exitCode !== null && `temporal-server exited with ${server!.exitCode}; see ${dir}/temporal-server.log`);
  expect(info.serverVersion).toBe(pinned);
}, 180_000);

it("registers the namespace and Switchyard's search attributes with the temporal-namespace service's commands, twice, and is done only once starts carrying them are accepted", async () => {
  const connection = await Connection.connect({ address: `127.0.0.1:${grpcPort}` });
  try {
    for (let i = 0; i < 2; i++) {
      await runOneShot('temporal-namespace', { TEMPORAL_ADDRESS: `127.0.0.1:${grpcPort}` }, (script) => script);
      // At once: the API and worker start as soon as this one-shot has finished (depends_on).
      expect(await startCarryingEverySearchAttribute(new Client({ connection }), `compose-readiness-${i}`)).toBeTruthy();
    }
    const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace: 'default' });
    expect(Object.keys(customAttributes ?? {}).filter((name) => name.startsWith('Switchyard')).sort()).toEqual(['SwitchyardAnonymousId', 'SwitchyardDestinations', 'SwitchyardOutcomes', 'SwitchyardSource', 'SwitchyardStatus', 'SwitchyardType', 'SwitchyardUserId']);
  } finally {
    await connection.close();
  }
}, 180_000);

it("migrates Switchyard's store as the API's DATABASE_URL role (the owner of the switchyard database)", async () => {
  const databaseUrl = service('api').environment!.DATABASE_URL.replace('@postgresql:5432/', `@127.0.0.1:${postgres.port}/`);
  expect(service('worker').environment!.DATABASE_URL).toBe(service('api').environment!.DATABASE_URL);
  const store = await openStore({ databaseUrl, databasePath: '' });
  await store.close();
}, 60_000);
