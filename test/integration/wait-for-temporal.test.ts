import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { faultDir, startOwnTemporal, type OwnTemporal } from '../helpers/faults';
import { freePort, portBoundLater } from '../helpers/ports';
import { spawnApi, spawnWorker, stopProcess, waitFor, waitForPoller } from '../helpers/processes';
import { ADMIN_TOKEN } from '../helpers/system';

/**
 * A worker or API process started before Temporal is reachable (compose start-up order, a server
 * being restarted) waits for it, saying so, and starts polling or serving once it comes up; only
 * TEMPORAL_CONNECT_TIMEOUT ends the wait.
 */

let dir: string;
let temporal: OwnTemporal | undefined;
const processes: ChildProcess[] = [];

beforeAll(() => {
  dir = faultDir('wait-for-temporal');
});

afterAll(async () => {
  await Promise.all(processes.map((child) => stopProcess(child)));
  await stopProcess(temporal?.process);
}, 60_000);

function env(port: number, taskQueue: string, more: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_TASK_QUEUE: taskQueue,
    DATABASE_URL: '',
    DATABASE_PATH: path.join(dir, `${taskQueue}.db`),
    ADMIN_TOKEN,
    LOG_LEVEL: 'info',
    ...more,
  };
}

const linesOf = (logFile: string, text: string) => readFileSync(logFile, 'utf8').split('\n').filter((line) => line.includes(text));

it('a worker and an API started before Temporal wait for it, saying so, then poll and serve once it is up', async () => {
  // Both are bound only once Temporal is up, seconds from now.
  const temporalPort = await portBoundLater();
  const taskQueue = `wait-for-temporal-${process.pid}`;
  const processEnv = env(temporalPort, taskQueue, { TEMPORAL_CONNECT_TIMEOUT: '0' });
  const workerLog = path.join(dir, 'worker.log');
  const apiLog = path.join(dir, 'api.log');
  let apiPort = await portBoundLater();
  while (apiPort === temporalPort) apiPort = await portBoundLater();
  const worker = spawnWorker(processEnv, workerLog);
  const api = spawnApi(processEnv, apiPort, apiLog);
  processes.push(worker, api);

  // Nothing listens on the port: both keep waiting and say for what (a line every 10 s).
  const waiting = `waiting for Temporal at 127.0.0.1:${temporalPort}`;
  await waitFor(() => expect(linesOf(workerLog, waiting).length).toBeGreaterThanOrEqual(2), 60_000, () => worker.exitCode !== null && `worker exited with ${worker.exitCode}`);
  await waitFor(() => expect(linesOf(apiLog, waiting).length).toBeGreaterThanOrEqual(1), 30_000, () => api.exitCode !== null && `API exited with ${api.exitCode}`);
  expect(worker.exitCode).toBeNull();
  expect(api.exitCode).toBeNull();
  expect(linesOf(workerLog, waiting)[0]).toContain('ECONNREFUSED');

  temporal = await startOwnTemporal(dir, temporalPort);
  await waitForPoller(temporal.address, 'default', taskQueue, worker);
  await waitFor(async () => {
    const res = await fetch(`http://127.0.0.1:${apiPort}/health`);
    expect(res.status).toBe(200);
  }, 60_000, () => api.exitCode !== null && `API exited with ${api.exitCode}`);
  expect(linesOf(workerLog, 'worker polling')).toHaveLength(1);
}, 240_000);

it('gives up after TEMPORAL_CONNECT_TIMEOUT with a non-zero exit naming the address and the setting', async () => {
  const port = await freePort();
  const logFile = path.join(dir, 'timeout-worker.log');
  const started = Date.now();
  const worker = spawnWorker(env(port, `wait-timeout-${process.pid}`, { TEMPORAL_CONNECT_TIMEOUT: '3s' }), logFile);
  processes.push(worker);
  const code = await new Promise<number | null>((resolve) => worker.once('exit', (c) => resolve(c)));
  expect(code).not.toBe(0);
  const log = readFileSync(logFile, 'utf8');
  expect(log).toContain(`waiting for Temporal at 127.0.0.1:${port}`);
  expect(log).toContain(`Temporal at 127.0.0.1:${port} (plaintext) not reachable within 3s (TEMPORAL_CONNECT_TIMEOUT)`);
  // Waited the 3 s, not more than tsx start-up and the bundle-free start on top.
  expect(Date.now() - started).toBeGreaterThanOrEqual(3_000);
}, 120_000);
