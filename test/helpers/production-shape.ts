import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { deliveryWorkflowId } from '../../src/delivery/ids';
import type { DeliveryReport } from '../../src/delivery/types';
import { chunks } from '../../src/store/chunks';
import { ADMIN_TOKEN, FAULT_DELIVERY_ENV, sleep, startOwnApi, startOwnWorker, stopProcess, type OwnApi, type OwnWorker } from './faults';
import { testDataConverter } from './data-converter';
import { createTestDatabase } from './postgres';
import { waitFor } from './processes';
import { startRealTemporal, type RealTemporal } from './real-temporal';
import type { Receiver } from './receiver';
import { caughtUp, killFigures, receipts, waitForAll, type Log, type WorkerKillFigures } from './scenarios';
import { basicAuth, trackBatch } from './system';
import { startTcpRelay, type TcpRelay } from './tcp-relay';

/**
 * The production shape on one machine: Temporal's own server on PostgreSQL with several
 * history shards, Switchyard's store on PostgreSQL, two API processes and two worker processes,
 * nothing shared but those two servers. Used by test/integration/production-shape.test.ts.
 * The workers reach Temporal through one TCP relay and the APIs through another, so a drill can cut
 * either network (test/helpers/drill-faults.ts relayCut).
 */

export { ADMIN_TOKEN };

export interface ProductionShape {
  temporal: RealTemporal;
  client: Client;
  databaseUrl: string;
  apis: OwnApi[];
  workers: OwnWorker[];
  /** Between the workers and Temporal, and between the APIs and Temporal. */
  relays: { workers: TcpRelay; apis: TcpRelay };
  close(): Promise<void>;
}

export async function startProductionShape(options: { dir: string; shards: number; taskQueue: string }): Promise<ProductionShape> {
  const temporal = await startRealTemporal({ dir: path.join(options.dir, 'temporal'), shards: options.shards });
  const started: { apis: OwnApi[]; workers: OwnWorker[] } = { apis: [], workers: [] };
  let connection: Connection | undefined;
  const relays = { workers: await startTcpRelay(temporal.address), apis: await startTcpRelay(temporal.address) };
  const stopAll = async () => {
    for (const child of [...started.apis, ...started.workers]) await stopProcess(child.process, 'SIGKILL');
    await connection?.close();
    await Promise.all([relays.workers.close(), relays.apis.close()]);
    await temporal.stop();
  };
  try {
    // One PostgreSQL server, a database each for Temporal (made by the script) and Switchyard.
    const databaseUrl = await createTestDatabase('switchyard', `postgres://temporal:temporal@127.0.0.1:${temporal.pgPort}`);
    const env: NodeJS.ProcessEnv = {
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TASK_QUEUE: options.taskQueue,
      DATABASE_URL: databaseUrl,
      // Nothing may be written here when DATABASE_URL is set: a path that cannot be created proves it.
      DATA_DIR: '/proc/switchyard-must-not-write',
      DATABASE_PATH: '/proc/switchyard-must-not-write/switchyard.db',
      ADMIN_TOKEN,
      INGEST_RATE_LIMIT: '0',
      ...FAULT_DELIVERY_ENV,
      DELIVERY_INITIAL_BACKOFF: '500ms',
      LOG_LEVEL: 'info',
    };
    for (const n of [1, 2]) started.workers.push(await startOwnWorker({ ...env, TEMPORAL_ADDRESS: relays.workers.address }, path.join(options.dir, `worker-${n}.log`)));
    for (const n of [1, 2]) started.apis.push(await startOwnApi({ ...env, TEMPORAL_ADDRESS: relays.apis.address }, path.join(options.dir, `api-${n}.log`)));
    connection = await Connection.connect({ address: temporal.address });
    const client = new Client({ connection, namespace: 'default', dataConverter: testDataConverter() });
    // startOwnWorker returns once the queue has a poller, which the first worker already is: wait
    // for each worker's own identity (pid@host), or the second may still be bundling its workflows
    // while the first takes every workflow (and, sticky, every later task of it).
    await waitFor(async () => {
      const { pollers } = await connection!.workflowService.describeTaskQueue({ namespace: 'default', taskQueue: { name: options.taskQueue } });
      const polling = new Set((pollers ?? []).map((p) => p.identity?.split('@')[0]));
      const missing = started.workers.filter((w) => !polling.has(String(w.process.pid)));
      if (missing.length > 0) throw new Error(`worker pid ${missing.map((w) => w.process.pid).join(', ')} not polling yet`);
    }, 120_000);
    return {
      temporal,
      client,
      databaseUrl,
      ...started,
      relays,
      close: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

async function admin<T>(api: OwnApi, method: string, route: string, body?: unknown): Promise<T> {
  const res = await fetch(`${api.url}/admin${route}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} /admin${route} answered ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}

/** A source with one destination, created through `api` (the admin API, as an operator would). */
export async function sourceThrough(api: OwnApi, name: string, webhookUrl: string): Promise<{ sourceId: string; writeKey: string; destinationId: string }> {
  const source = await admin<{ id: string; writeKey: string }>(api, 'POST', '/sources', { name });
  const destination = await admin<{ id: string }>(api, 'POST', `/sources/${source.id}/destinations`, { name: `${name} webhook`, enabled: true, webhooks: [{ url: webhookUrl }] });
  return { sourceId: source.id, writeKey: source.writeKey, destinationId: destination.id };
}

export const readSource = (api: OwnApi, sourceId: string) => admin<{ id: string; name: string }>(api, 'GET', `/sources/${sourceId}`);
export const switchOff = (api: OwnApi, destinationId: string) => admin(api, 'PATCH', `/destinations/${destinationId}`, { enabled: false });

/** Posts a batch to one API until it is accepted; a 503 (Temporal slow to confirm) is retried, as Segment's clients do. */
export async function postBatch(api: OwnApi, writeKey: string, ids: string[]): Promise<void> {
  for (let retries = 0; ; retries++) {
    const res = await fetch(`${api.url}/v1/batch`, {
      method: 'POST',
      headers: { authorization: basicAuth(writeKey), 'content-type': 'application/json' },
      body: JSON.stringify(trackBatch(ids)),
    });
    if (res.status === 200) return;
    if (res.status !== 503 || retries > 60) throw new Error(`batch to ${api.url} answered ${res.status}: ${await res.text()}`);
    await sleep(1_000);
  }
}

/** The identities of the workers that ran a delivery's attempts, from its history (regular activities only). */
export async function attemptWorkers(client: Client, workflowId: string): Promise<string[]> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).flatMap((e) => (e.activityTaskStartedEventAttributes?.identity ? [e.activityTaskStartedEventAttributes.identity] : []));
}

export interface SwitchOffFigures {
  messages: number;
  /** Worker identities that ran retry attempts before the switch-off. */
  retryingWorkers: string[];
  attemptsBeforeSwitchOff: number;
  /** Attempts that reached the receiver more than a grace period after the PATCH answered (must be 0). */
  attemptsAfterSwitchOff: number;
  /** How each delivery ended. */
  statuses: string[];
}

/**
 * Messages whose webhook always answers 503 are retried by both workers; switching their
 * destination off through API 1 (they were sent through API 2) stops every retry.
 */
export async function switchOffScenario(shape: ProductionShape, failing: Receiver, options: { messages: number; log: Log }): Promise<SwitchOffFigures> {
  const [api1, api2] = shape.apis;
  const { sourceId, writeKey, destinationId } = await sourceThrough(api1, 'switch off', failing.url);
  const ids = Array.from({ length: options.messages }, (_, i) => `off-${i}`);
  await postBatch(api2, writeKey, ids);
  const workflowIds = ids.map((id) => deliveryWorkflowId(sourceId, id));
  // Rounds until every message has been retried and both workers have run attempts (regular
  // activities, whose worker identities are in history).
  const retryingWorkers = await waitFor(async () => {
    if (failing.requests.length < 2 * options.messages) throw new Error(`${failing.requests.length} attempts so far`);
    const identities = new Set((await Promise.all(workflowIds.map((id) => attemptWorkers(shape.client, id)))).flat());
    if (identities.size < 2) throw new Error(`retries ran on ${identities.size} worker(s) so far`);
    return [...identities];
  }, 120_000);
  const attemptsBeforeSwitchOff = failing.requests.length;
  await switchOff(api1, destinationId);
  const switchedOffAt = Date.now();
  options.log(`switched off after ${attemptsBeforeSwitchOff} attempts by ${retryingWorkers.length} workers`);
  const reports = await Promise.all(workflowIds.map((id) => shape.client.workflow.getHandle(id).result() as Promise<DeliveryReport>));
  // Attempts already on the wire when the PATCH answered may still land; none may start later.
  const graceMs = 1_000;
  return {
    messages: options.messages,
    retryingWorkers,
    attemptsBeforeSwitchOff,
    attemptsAfterSwitchOff: failing.requests.filter((r) => r.at > switchedOffAt + graceMs).length,
    statuses: reports.map((r) => r.destinations.map((d) => d.status).join(',')),
  };
}

/**
 * `messages` split across both APIs; worker 1 SIGKILLed once a third have arrived and not
 * restarted: worker 2 delivers the rest, and only attempts in flight at the kill arrive twice.
 */
export async function splitAndKillScenario(shape: ProductionShape, receiver: Receiver, options: { messages: number; log: Log }): Promise<WorkerKillFigures> {
  const [api1, api2] = shape.apis;
  const { sourceId, writeKey } = await sourceThrough(api2, 'production shape', receiver.url);
  const ids = Array.from({ length: options.messages }, (_, i) => `ps-${i}`);
  const batches = chunks(ids, 50);
  const started = Date.now();
  const sending = (async () => {
    for (const group of chunks(batches, 4)) {
      await Promise.all(group.map((batch, i) => postBatch(i % 2 === 0 ? api1 : api2, writeKey, batch)));
    }
  })();
  await waitFor(() => {
    if (receipts(receiver).size < options.messages / 3) throw new Error('not a third yet');
  }, 600_000);
  const killed = shape.workers[0];
  killed.process.kill('SIGKILL');
  const killedAt = Date.now();
  await killed.exited;
  const caughtUpAt = await caughtUp(receiver);
  const deliveredAtKill = receipts(receiver).size;
  options.log(`worker 1 SIGKILLed with ${deliveredAtKill}/${options.messages} delivered`);
  await sending;
  await waitForAll(receiver, ids, 900_000, options.log, async (id) => (await shape.client.workflow.getHandle(deliveryWorkflowId(sourceId, id)).describe()).status.name);
  return killFigures(receiver, ids, { killedAt, caughtUpAt, deliveredAtKill, started });
}
