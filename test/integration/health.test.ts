import path from 'node:path';
import { faultDir, sleep, startOwnTemporal, startOwnWorker, stopProcess, type OwnTemporal, type OwnWorker } from '../helpers/faults';
import { startSystem, type TestSystem } from '../helpers/system';
import { VERSION } from '../../src/version';

/** Short windows: this test's own dev server ends idle long polls every 3 s instead of 60 s. */
const LONG_POLL = '3s';
const POLLER_WINDOW_MS = 6_000;

let temporal: OwnTemporal;
let worker: OwnWorker;
let system: TestSystem;
const taskQueue = `health-${process.pid}`;
const personasTaskQueue = `${taskQueue}-personas`;

beforeAll(async () => {
  const dir = faultDir('health');
  temporal = await startOwnTemporal(dir, undefined, ['--dynamic-config-value', `matching.longPollExpirationInterval="${LONG_POLL}"`]);
  const env = { TEMPORAL_ADDRESS: temporal.address, TEMPORAL_TASK_QUEUE: taskQueue, PERSONAS_DELIVERY_TASK_QUEUE: personasTaskQueue };
  worker = await startOwnWorker(env, path.join(dir, 'worker.log'));
  system = await startSystem({ temporalAddress: temporal.address, temporalTaskQueue: taskQueue, personasDeliveryTaskQueue: personasTaskQueue, healthPollerWindow: POLLER_WINDOW_MS });
}, 180_000);

afterAll(async () => {
  await system?.close();
  await stopProcess(worker?.process, 'SIGKILL');
  await stopProcess(temporal?.process);
});

const health = async () => {
  const response = await system.app.inject({ method: 'GET', url: '/health' });
  return { status: response.statusCode, body: response.json() };
};

describe('GET /health watches both delivery task queues and notices a dead worker', () => {
  it('is 200 while a live worker polls the delivery and Personas task queues, idle longer than the window', async () => {
    for (let i = 0; i < 3; i++) {
      const { status, body } = await health();
      expect(status).toBe(200);
      expect(body).toMatchObject({ status: 'ok', version: VERSION, temporal: true, searchAttributes: true, store: true, worker: true, problems: [] });
      expect(body.taskQueues.map((q: { name: string }) => q.name)).toEqual([taskQueue, personasTaskQueue]);
      for (const queue of body.taskQueues) expect(queue.workers).toBeGreaterThan(0);
      await sleep(POLLER_WINDOW_MS / 2);
    }
  });

  it('is 503 when nobody polls the Personas task queue, naming it', async () => {
    const elsewhere = await startSystem({ temporalAddress: temporal.address, temporalTaskQueue: taskQueue, personasDeliveryTaskQueue: `${taskQueue}-nobody`, healthPollerWindow: POLLER_WINDOW_MS });
    try {
      const response = await elsewhere.app.inject({ method: 'GET', url: '/health' });
      expect(response.statusCode).toBe(503);
      expect(response.json()).toMatchObject({ worker: false, taskQueues: [{ name: taskQueue }, { name: `${taskQueue}-nobody`, workers: 0 }] });
      expect(response.json().problems).toEqual([expect.stringMatching(new RegExp(`^task queue ${taskQueue}-nobody: no worker polled it within \\d+ s \\(HEALTH_POLLER_WINDOW\\); start a worker on it$`))]);
    } finally {
      await elsewhere.close();
    }
  });

  it('turns 503 within HEALTH_POLLER_WINDOW of the worker being killed, though Temporal still lists its pollers', async () => {
    await stopProcess(worker.process, 'SIGKILL');
    const killedAt = Date.now();
    let reply = await health();
    while (reply.status === 200 && Date.now() - killedAt < POLLER_WINDOW_MS + 5_000) {
      await sleep(250);
      reply = await health();
    }
    expect(reply.status).toBe(503);
    expect(reply.body).toMatchObject({ status: 'unavailable', temporal: true, worker: false });
    expect(reply.body.problems).toContainEqual(expect.stringContaining(`task queue ${taskQueue}: no worker polled it`));
    expect(Date.now() - killedAt).toBeLessThanOrEqual(POLLER_WINDOW_MS + 1_000);
    // Temporal's own poller list still has the dead worker: the window is what tells.
    const { pollers } = await system.client.workflowService.describeTaskQueue({ namespace: system.config.temporalNamespace, taskQueue: { name: taskQueue } });
    expect((pollers ?? []).length).toBeGreaterThan(0);
  });
});
