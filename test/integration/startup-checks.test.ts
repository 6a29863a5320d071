import type { ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { faultDir, readLog, startOwnApi, stopProcess } from '../helpers/faults';
import { freePort } from '../helpers/ports';
import { ROOT, spawnApi, spawnWorker, waitFor, waitForPoller } from '../helpers/processes';
import { ALL_SEARCH_ATTRIBUTES } from '../../src/workflows/search-attributes';

/**
 * A process refuses to start against a namespace that lacks one of Switchyard's search
 * attributes, naming it and the command that registers it, instead of starting healthy and failing
 * the first DELETE regulation; /admin/status names a search attribute removed later, and answers 200 once
 * it is back. On the run's real dev server, in a namespace of this file's own. A store whose schema
 * is not current and payload keys that are not keys stop the start too, each naming the fix.
 */

const run = promisify(execFile);
const dir = faultDir('startup-checks');
const namespace = `startup-checks-${process.pid}`;
const address = process.env.TEMPORAL_ADDRESS!;
let cli: string;
const children: ChildProcess[] = [];

const temporalCli = (...args: string[]) => run(cli, [...args, '--address', address], { timeout: 60_000 });
const CLI_TYPE: Record<string, string> = { KEYWORD: 'Keyword', KEYWORD_LIST: 'KeywordList' };

beforeAll(async () => {
  cli = (await run('bash', [path.join(ROOT, 'scripts/temporal-dev.sh'), 'ensure'])).stdout.trim();
  await temporalCli('operator', 'namespace', 'create', '--namespace', namespace);
}, 120_000);

afterAll(async () => {
  for (const child of children) await stopProcess(child);
});

/** Waits for a process that should refuse to start; returns its exit code and log. */
async function refused(child: ChildProcess, logFile: string): Promise<{ code: number | null; log: string }> {
  children.push(child);
  const code = await new Promise<number | null>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`still running after 90 s; see ${logFile}`)), 90_000);
    child.once('exit', (exitCode) => {
      clearTimeout(timer);
      resolve(exitCode);
    });
  });
  return { code, log: readLog(logFile) };
}

it('a worker refuses a namespace without any of them, naming each and the command', async () => {
  const logFile = path.join(dir, 'worker-none.log');
  const { code, log } = await refused(spawnWorker({ TEMPORAL_NAMESPACE: namespace, TEMPORAL_TASK_QUEUE: `startup-${process.pid}` }, logFile), logFile);
  expect(code).not.toBe(0);
  for (const key of ALL_SEARCH_ATTRIBUTES) expect(log).toContain(`${key.name} (${CLI_TYPE[key.type as string]}) is missing`);
  expect(log).toContain(`temporal operator search-attribute create --namespace ${namespace} --name SwitchyardSource --type Keyword`);
}, 120_000);

it('an API refuses a namespace that lacks SwitchyardAnonymousId alone, naming it and only it', async () => {
  const others = ALL_SEARCH_ATTRIBUTES.filter((key) => key.name !== 'SwitchyardAnonymousId');
  await temporalCli('operator', 'search-attribute', 'create', '--namespace', namespace, ...others.flatMap((key) => ['--name', key.name, '--type', CLI_TYPE[key.type as string]]));
  const logFile = path.join(dir, 'api-one.log');
  const { code, log } = await refused(spawnApi({ TEMPORAL_NAMESPACE: namespace, ADMIN_TOKEN: 'startup-checks-admin-0123456789abcdef' }, await freePort(), logFile), logFile);
  expect(code).not.toBe(0);
  expect(log).toContain(`Temporal namespace ${namespace} lacks Switchyard's search attributes: SwitchyardAnonymousId (Keyword) is missing. Register it with: temporal operator search-attribute create --namespace ${namespace} --name SwitchyardAnonymousId --type Keyword`);
  for (const key of others) expect(log).not.toContain(`${key.name} (`);
}, 120_000);

it('starts once the command it named has run', async () => {
  await temporalCli('operator', 'search-attribute', 'create', '--namespace', namespace, '--name', 'SwitchyardAnonymousId', '--type', 'Keyword');
  const taskQueue = `startup-ok-${process.pid}`;
  const worker = spawnWorker({ TEMPORAL_NAMESPACE: namespace, TEMPORAL_TASK_QUEUE: taskQueue }, path.join(dir, 'worker-ok.log'));
  children.push(worker);
  await waitForPoller(address, namespace, taskQueue, worker);

  // /admin/status reads them too: an attribute removed later is named, with the command, until it is back.
  const api = await startOwnApi({ TEMPORAL_NAMESPACE: namespace, TEMPORAL_TASK_QUEUE: taskQueue, ADMIN_TOKEN: 'startup-checks-admin-0123456789abcdef' }, path.join(dir, 'api-ok.log'));
  children.push(api.process);
  const health = async () => {
    const res = await fetch(`${api.url}/admin/status`, { headers: { authorization: 'Bearer startup-checks-admin-0123456789abcdef' } });
    return { status: res.status, body: (await res.json()) as { searchAttributes: boolean; problems: string[] } };
  };
  // The worker's Personas queue poller may lag its delivery one by a moment.
  await waitFor(async () => {
    const { status, body } = await health();
    if (status !== 200) throw new Error(`/admin/status ${status}: ${body.problems.join('; ')}`);
  }, 60_000);
  await temporalCli('operator', 'search-attribute', 'remove', '--namespace', namespace, '--name', 'SwitchyardAnonymousId', '--yes');
  const broken = await waitFor(async () => {
    const reply = await health();
    if (reply.status !== 503) throw new Error(`/admin/status still ${reply.status}`);
    return reply.body;
  }, 60_000);
  expect(broken.searchAttributes).toBe(false);
  // What a load balancer reads does not change: the API itself answers.
  expect((await fetch(`${api.url}/health`)).status).toBe(200);
  expect(broken.problems).toEqual([expect.stringContaining(`search attributes: Temporal namespace ${namespace} lacks Switchyard's search attributes: SwitchyardAnonymousId (Keyword) is missing. Register it with: temporal operator search-attribute create --namespace ${namespace} --name SwitchyardAnonymousId --type Keyword`)]);
  await temporalCli('operator', 'search-attribute', 'create', '--namespace', namespace, '--name', 'SwitchyardAnonymousId', '--type', 'Keyword');
  await waitFor(async () => {
    const { status, body } = await health();
    if (status !== 200) throw new Error(`/admin/status ${status}: ${body.problems.join('; ')}`);
  }, 60_000);
}, 240_000);

describe('the store\'s schema', () => {
  const databasePath = path.join(dir, 'unmigrated.db');
  const storeEnv = { DATABASE_PATH: databasePath, DATABASE_MIGRATE: 'off', TEMPORAL_TASK_QUEUE: `startup-schema-${process.pid}` };

  it('a worker with DATABASE_MIGRATE=off refuses a store whose migrations are not applied, naming them and npm run migrate', async () => {
    new Database(databasePath).close();
    const logFile = path.join(dir, 'worker-unmigrated.log');
    const { code, log } = await refused(spawnWorker(storeEnv, logFile), logFile);
    expect(code).not.toBe(0);
    expect(log).toContain(`The store ${databasePath} is not migrated: 0001_settings, 0002_delivery_safety`);
    expect(log).toContain('Apply them with: npm run migrate');
  }, 120_000);

  it('starts once npm run migrate has run', async () => {
    const { stdout } = await run('npm', ['run', '--silent', 'migrate'], { cwd: ROOT, env: { ...process.env, DATABASE_PATH: databasePath }, timeout: 60_000 });
    expect(stdout).toContain('store schema is up to date');
    const worker = spawnWorker(storeEnv, path.join(dir, 'worker-migrated.log'));
    children.push(worker);
    await waitForPoller(address, 'default', storeEnv.TEMPORAL_TASK_QUEUE, worker);
  }, 180_000);

  it('an API refuses a store a newer version migrated, naming the migration it does not know', async () => {
    const db = new Database(databasePath);
    db.prepare('insert into kysely_migration (name, timestamp) values (?, ?)').run('0999_from_a_newer_version', new Date().toISOString());
    db.close();
    const logFile = path.join(dir, 'api-newer.log');
    const { code, log } = await refused(spawnApi({ DATABASE_PATH: databasePath, ADMIN_TOKEN: 'startup-checks-admin-0123456789abcdef' }, await freePort(), logFile), logFile);
    expect(code).not.toBe(0);
    expect(log).toContain(`The store ${databasePath} was migrated by a newer Switchyard: it has applied 0999_from_a_newer_version, which this version does not know.`);
  }, 120_000);
});

it('a worker refuses payload keys that are not 32-byte keys, naming the variable and how to make one', async () => {
  const logFile = path.join(dir, 'worker-bad-key.log');
  const { code, log } = await refused(spawnWorker({ PAYLOAD_KEYS: 'k1=c2hvcnQ=', PAYLOAD_KEYS_FILE: '', TEMPORAL_TASK_QUEUE: `startup-keys-${process.pid}` }, logFile), logFile);
  expect(code).not.toBe(0);
  expect(log).toContain('Invalid PAYLOAD_KEYS: key "k1" is not 32 bytes in base64 (generate one with `openssl rand -base64 32`)');
  expect(log).not.toContain('c2hvcnQ=');
}, 120_000);
