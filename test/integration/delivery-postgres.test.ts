import { createHmac } from 'node:crypto';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { faultDir, startOwnApi, startOwnWorker, stopProcess, type OwnApi, type OwnWorker } from '../helpers/faults';
import { testDataConverter } from '../helpers/data-converter';
import { createTestDatabase } from '../helpers/postgres';
import { startReceiver, type ReceivedRequest, type Receiver } from '../helpers/receiver';
import { ADMIN_TOKEN, basicAuth, deliveryResult } from '../helpers/system';

/**
 * The delivery rules on the PostgreSQL store, end to end — an API process and a worker
 * process of this file's own on their own database and task queue. The worker reads destinations
 * through its LISTEN/NOTIFY cache, here with a 10-minute TTL: a switched-off destination or a
 * rotated secret must still apply to the very next attempt, which only the notification makes
 * happen (with the invalidation gone, the cached copy would keep retrying until the retry window).
 */

const queue = `delivery-postgres-${process.pid}`;
const dir = faultDir('delivery-postgres');
const CACHE_TTL = '10m';
let api: OwnApi;
let worker: OwnWorker;
let client: Client;
const receivers: Receiver[] = [];

beforeAll(async () => {
  const databaseUrl = await createTestDatabase('switchyard_delivery');
  const env = { DATABASE_URL: databaseUrl, TEMPORAL_TASK_QUEUE: queue };
  // The API first: it migrates the new database before the worker opens it (both would wait their turn anyway).
  api = await startOwnApi({
    ...env,
    ADMIN_TOKEN,
    DELIVERY_RETRY_WINDOW: '60s',
    DELIVERY_TIMEOUT: '2s',
    DELIVERY_INITIAL_BACKOFF: '200ms',
    DELIVERY_MAX_BACKOFF: '1s',
  }, path.join(dir, 'api.log'));
  [worker, client] = await Promise.all([
    startOwnWorker({ ...env, DESTINATION_CACHE_TTL: CACHE_TTL }, path.join(dir, 'worker.log')),
    Connection.connect({ address: process.env.TEMPORAL_ADDRESS! }).then((connection) => new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE ?? 'default', dataConverter: testDataConverter() })),
  ]);
}, 240_000);

afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await client?.connection.close();
  await stopProcess(worker?.process);
  await stopProcess(api?.process);
});

async function admin<T>(method: string, url: string, body?: unknown): Promise<T> {
  const res = await fetch(`${api.url}/admin${url}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} /admin${url} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

/** A source with one destination to `receiver`, made through the admin API (so on PostgreSQL). */
async function setUp(status: (request: ReceivedRequest) => number, sharedSecret?: string) {
  const receiver = await startReceiver((request) => ({ status: status(request) }));
  receivers.push(receiver);
  const source = await admin<{ id: string; writeKey: string }>('POST', '/sources', { name: `pg ${expect.getState().currentTestName}`.slice(0, 100) });
  const destination = await admin<{ id: string }>('POST', `/sources/${source.id}/destinations`, { enabled: true, ...(sharedSecret && { sharedSecret }), webhooks: [{ url: receiver.url, headers: {} }] });
  return { receiver, sourceId: source.id, writeKey: source.writeKey, destinationId: destination.id };
}

async function track(writeKey: string, messageId: string): Promise<void> {
  const res = await fetch(`${api.url}/v1/track`, {
    method: 'POST',
    headers: { authorization: basicAuth(writeKey), 'content-type': 'application/json' },
    body: JSON.stringify({ userId: 'u', event: 'Postgres', messageId }),
  });
  if (res.status !== 200) throw new Error(`/v1/track answered ${res.status}: ${await res.text()}`);
}

it('delivers a message: API and worker both on PostgreSQL', async () => {
  const { receiver, sourceId, writeKey } = await setUp(() => 200);
  await track(writeKey, 'pg-delivered');
  expect(await deliveryResult(client, sourceId, 'pg-delivered')).toMatchObject({ ok: true, report: { destinations: [{ status: 'delivered', rounds: 1 }] } });
  expect(receiver.requests).toHaveLength(1);
  expect(JSON.parse(receiver.requests[0].body)).toMatchObject({ messageId: 'pg-delivered', event: 'Postgres' });
});

it(`stops retrying within one round once the destination is switched off through the API (worker cache TTL ${CACHE_TTL})`, async () => {
  const { receiver, sourceId, writeKey, destinationId } = await setUp(() => 503);
  await track(writeKey, 'pg-switched-off');
  // Two attempts: the worker has read (and cached) the destination as enabled.
  await receiver.waitForRequests(2);
  await admin('PATCH', `/destinations/${destinationId}`, { enabled: false });
  const switchedOffAt = Date.now();
  const seenAtSwitch = receiver.requests.length;

  const result = await deliveryResult(client, sourceId, 'pg-switched-off');
  const stoppedAfterMs = Date.now() - switchedOffAt;
  expect(result).toMatchObject({ ok: true, report: { destinations: [{ status: 'stopped' }] } });
  // One round (backoff ≤ 1 s, a 503 answers at once), with room for a busy shared machine: far
  // below the 60 s retry window and the 10-minute TTL a stale copy would live for.
  expect(stoppedAfterMs).toBeLessThan(10_000);
  // At most an attempt already past its destination read when the switch committed.
  expect(receiver.requests.length - seenAtSwitch).toBeLessThanOrEqual(1);
});

it('signs the next attempt with a shared secret rotated through the API', async () => {
  const sign = (secret: string, body: string) => createHmac('sha1', secret).update(body).digest('hex');
  // Accepts only a request signed with the new secret: the delivery ends once one arrives.
  const { receiver, sourceId, writeKey, destinationId } = await setUp((r) => (r.headers['x-signature'] === sign('new-secret', r.body) ? 200 : 503), 'old-secret');
  await track(writeKey, 'pg-rotated');
  await receiver.waitForRequests(2);
  await admin('PATCH', `/destinations/${destinationId}`, { sharedSecret: 'new-secret' });
  const rotatedAt = Date.now();

  expect(await deliveryResult(client, sourceId, 'pg-rotated')).toMatchObject({ ok: true, report: { destinations: [{ status: 'delivered' }] } });
  expect(Date.now() - rotatedAt).toBeLessThan(10_000);
  const signedOld = receiver.requests.filter((r) => r.headers['x-signature'] === sign('old-secret', r.body));
  expect(signedOld.length).toBeGreaterThanOrEqual(2);
  // At most one attempt already past its destination read at the rotation still carries the old secret.
  expect(signedOld.filter((r) => r.at > rotatedAt).length).toBeLessThanOrEqual(1);
  expect(receiver.requests.at(-1)!.headers['x-signature']).toBe(sign('new-secret', receiver.requests.at(-1)!.body));
});
