import type { ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { faultDir, readLog, stopProcess } from '../helpers/faults';
import { freePort } from '../helpers/ports';
import { ROOT, spawnApi, spawnWorker, waitForPoller } from '../helpers/processes';
import { ALL_SEARCH_ATTRIBUTES } from '../../src/workflows/search-attributes';

/**
 * Issue 21: a process refuses to start against a namespace that lacks one of Switchyard's search
 * attributes, naming it and the command that registers it, instead of starting healthy and failing
 * the first DELETE regulation. On the run's real dev server, in a namespace of this file's own.
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
  const { code, log } = await refused(spawnApi({ TEMPORAL_NAMESPACE: namespace, ADMIN_TOKEN: 'startup-checks' }, await freePort(), logFile), logFile);
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
}, 180_000);
