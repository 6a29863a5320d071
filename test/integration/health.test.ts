import path from 'node:path';
import { InterceptingCall, type Interceptor } from '@grpc/grpc-js';
import { faultDir, sleep, startOwnTemporal, startOwnWorker, stopProcess, type OwnTemporal, type OwnWorker } from '../helpers/faults';
import { ADMIN_TOKEN, postTrackBatch, sourceWithDestination, startSystem, type TestSystem } from '../helpers/system';
import { VERSION } from '../../src/version';

/**
 * `/health` is what a load balancer reads, 200 while this API can take ingestion (store
 * and Temporal answer) whatever the workers do, with its status and version only; the deep view
 * (workers per task queue, search attributes, problems) is `/admin/status`, behind the admin token.
 * Both read Temporal at most once a second however many ask. Short windows: this test's own dev
 * server ends idle long polls every 3 s instead of 60 s, and a worker counts as gone after 6 s
 * (HEALTH_POLLER_WINDOW, 70 s by default) instead of 70.
 */
const LONG_POLL = '3s';
const POLLER_WINDOW_MS = 6_000;

let temporal: OwnTemporal;
let worker: OwnWorker;
let system: TestSystem;
const taskQueue = `health-${process.pid}`;
const personasTaskQueue = `${taskQueue}-personas`;

/** Every gRPC call the API's Temporal client puts on the wire (retries included), by method path. */
const temporalCalls: string[] = [];
const countTemporalCalls: Interceptor = (options, nextCall) => {
  temporalCalls.push(options.method_definition.path);
  return new InterceptingCall(nextCall(options));
};

beforeAll(async () => {
  const dir = faultDir('health');
  temporal = await startOwnTemporal(dir, undefined, ['--dynamic-config-value', `matching.longPollExpirationInterval="${LONG_POLL}"`]);
  const env = { TEMPORAL_ADDRESS: temporal.address, TEMPORAL_TASK_QUEUE: taskQueue, PERSONAS_DELIVERY_TASK_QUEUE: personasTaskQueue };
  worker = await startOwnWorker(env, path.join(dir, 'worker.log'));
  system = await startSystem({ temporalAddress: temporal.address, temporalTaskQueue: taskQueue, personasDeliveryTaskQueue: personasTaskQueue, healthPollerWindow: POLLER_WINDOW_MS }, [countTemporalCalls]);
}, 180_000);

afterAll(async () => {
  await system?.close();
  await stopProcess(worker?.process, 'SIGKILL');
  await stopProcess(temporal?.process);
});

const read = async (url: string, on = system) => {
  const response = await on.app.inject({ method: 'GET', url, headers: url.startsWith('/admin') ? { authorization: `Bearer ${ADMIN_TOKEN}` } : {} });
  return { status: response.statusCode, body: response.json() };
};
const health = () => read('/health');
const adminStatus = (on = system) => read('/admin/status', on);

/** Temporal calls made while `run` ran. */
async function temporalCallsDuring(run: () => Promise<unknown>): Promise<string[]> {
  const from = temporalCalls.length;
  await run();
  return temporalCalls.slice(from);
}

describe('GET /health answers a load balancer: status and version, 200 while this API can take ingestion', () => {
  it('is {"status":"ok","version":…} while healthy, with no task queue, worker count or namespace', async () => {
    const { status, body } = await health();
    expect(status).toBe(200);
    expect(body).toEqual({ status: 'ok', version: VERSION });
  });

  it('costs at most a few Temporal calls for a thousand concurrent readers, and one reading a second for a steady stream', async () => {
    await sleep(1_100); // past any reading the test before left fresh
    const burst = await temporalCallsDuring(() => Promise.all(Array.from({ length: 1_000 }, () => health())));
    expect(burst.length).toBeGreaterThan(0);
    expect(burst.length).toBeLessThanOrEqual(3);
    // Back to back for 2.5 s: a reading is answered for a second after it settled.
    const stream = await temporalCallsDuring(async () => {
      for (const until = Date.now() + 2_500; Date.now() < until; ) expect((await health()).status).toBe(200);
    });
    expect(stream.length).toBeLessThanOrEqual(4);
  });
});

describe('GET /admin/status: the deep view, behind the admin token', () => {
  it('is 401 without the admin token', async () => {
    expect((await system.app.inject({ method: 'GET', url: '/admin/status' })).statusCode).toBe(401);
  });

  it('is 200 while a live worker polls the delivery and Personas task queues, idle longer than the window', async () => {
    for (let i = 0; i < 3; i++) {
      const { status, body } = await adminStatus();
      expect(status).toBe(200);
      expect(body).toMatchObject({ status: 'ok', version: VERSION, temporal: true, searchAttributes: true, store: true, worker: true, problems: [] });
      expect(body.taskQueues.map((q: { name: string }) => q.name)).toEqual([taskQueue, personasTaskQueue]);
      for (const queue of body.taskQueues) expect(queue.workers).toBeGreaterThan(0);
      await sleep(POLLER_WINDOW_MS / 2);
    }
  });

  it('costs at most one reading (a call per dependency) for a thousand concurrent readers', async () => {
    await sleep(1_100);
    const burst = await temporalCallsDuring(() => Promise.all(Array.from({ length: 1_000 }, () => adminStatus())));
    // One reading: the search attributes and each of the two task queues; a second if the burst outlived the first.
    expect(burst.length).toBeGreaterThanOrEqual(3);
    expect(burst.length).toBeLessThanOrEqual(6);
  });

  it('is 503 "degraded" when nobody polls the Personas task queue, naming it, while /health stays 200', async () => {
    const elsewhere = await startSystem({ temporalAddress: temporal.address, temporalTaskQueue: taskQueue, personasDeliveryTaskQueue: `${taskQueue}-nobody`, healthPollerWindow: POLLER_WINDOW_MS });
    try {
      const { status, body } = await adminStatus(elsewhere);
      expect(status).toBe(503);
      expect(body).toMatchObject({ status: 'degraded', worker: false, taskQueues: [{ name: taskQueue }, { name: `${taskQueue}-nobody`, workers: 0 }] });
      expect(body.problems).toEqual([expect.stringMatching(new RegExp(`^task queue ${taskQueue}-nobody: no worker polled it within \\d+ s \\(HEALTH_POLLER_WINDOW\\); start a worker on it$`))]);
      expect(await read('/health', elsewhere)).toEqual({ status: 200, body: { status: 'ok', version: VERSION } });
    } finally {
      await elsewhere.close();
    }
  });
});

describe('every worker stopped for twice HEALTH_POLLER_WINDOW', () => {
  it('/health stays 200 and ingestion answers 200 throughout; /admin/status names the task queue within the window', async () => {
    const { writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: 'http://127.0.0.1:9/hook', headers: {} }] });
    await stopProcess(worker.process, 'SIGKILL');
    const killedAt = Date.now();
    let namedAt: number | undefined;
    let deep: { status: number; body: { status: string; temporal: boolean; worker: boolean; problems: string[] } } | undefined;
    for (let n = 0; Date.now() - killedAt < 2 * POLLER_WINDOW_MS; n++) {
      const [anonymous, ingest, status] = await Promise.all([health(), postTrackBatch(system.app, writeKey, [`workers-away-${n}`]), adminStatus()]);
      expect(anonymous).toEqual({ status: 200, body: { status: 'ok', version: VERSION } });
      expect({ status: ingest.statusCode, body: ingest.json() }).toEqual({ status: 200, body: { success: true } });
      if (status.status === 503 && namedAt === undefined) namedAt = Date.now();
      deep = status;
      await sleep(250);
    }
    expect(namedAt).toBeDefined();
    // The window, plus one reading kept fresh for a second, plus the reading's own time.
    expect(namedAt! - killedAt).toBeLessThanOrEqual(POLLER_WINDOW_MS + 2_500);
    expect(deep!.status).toBe(503);
    expect(deep!.body).toMatchObject({ status: 'degraded', temporal: true, worker: false });
    expect(deep!.body.problems).toContainEqual(expect.stringContaining(`task queue ${taskQueue}: no worker polled it`));
    expect(deep!.body.problems).toContainEqual(expect.stringContaining(`task queue ${personasTaskQueue}: no worker polled it`));
    // Temporal's own poller list still has the dead worker: the window is what tells.
    const { pollers } = await system.client.workflowService.describeTaskQueue({ namespace: system.config.temporalNamespace, taskQueue: { name: taskQueue } });
    expect((pollers ?? []).length).toBeGreaterThan(0);
  });
});
