import { randomBytes } from 'node:crypto';
import { readFileSync, existsSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { Connection, Client } from '@temporalio/client';
import { deliveryWorkflowId } from '../../src/delivery/ids';
import { testDataConverter } from '../helpers/data-converter';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { faultDir, readLog, startOwnApi, startOwnWorker, stopProcess, type OwnApi, type OwnWorker } from '../helpers/faults';
import { workflowHistoryText } from '../helpers/system';

/**
 * Secrets — write keys, the admin token, shared secrets, Standard Webhooks secrets (current and
 * rotated out) and static header values — never appear in logs, error messages, admin responses,
 * Temporal history or the database file. The API and the worker here are real processes of this
 * file's own, logging at `trace` so that every line they can write is searched.
 */

const QUEUE = `secrets-${process.pid}`;
const mark = (what: string) => `${what}-${randomBytes(12).toString('hex')}`;
const ADMIN_TOKEN = mark('admin-token');
const SHARED_SECRET = mark('shared-secret');
const HEADER_VALUE = `Bearer ${mark('header-value')}`;
const SIGNING_KEY = randomBytes(32);
const SIGNING_SECRET = `whsec_${SIGNING_KEY.toString('base64')}`;
const NEXT_SIGNING_KEY = randomBytes(32);
const NEXT_SIGNING_SECRET = `whsec_${NEXT_SIGNING_KEY.toString('base64')}`;
const WRONG_WRITE_KEY = mark('wrong-write-key');

let api: OwnApi;
let worker: OwnWorker;
let receiver: Receiver;
let gone: http.Server;
let goneUrl: string;
let client: Client;
const replies: { what: string; body: string }[] = [];
const workflowIds: string[] = [];
let writeKey: string;

async function call(what: string, method: string, url: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${api.url}${url}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body !== undefined && { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  replies.push({ what, body: `${res.status} ${JSON.stringify([...res.headers])} ${text}` });
  return { status: res.status, json: () => JSON.parse(text) };
}

const basic = (key: string) => ({ authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}` });

beforeAll(async () => {
  const dir = faultDir('secrets');
  const env = { TEMPORAL_TASK_QUEUE: QUEUE, LOG_LEVEL: 'trace', ADMIN_TOKEN, DELIVERY_TIMEOUT: '1s', DELIVERY_INITIAL_BACKOFF: '100ms', DELIVERY_MAX_BACKOFF: '200ms', DELIVERY_RETRY_WINDOW: '30s' };
  [worker, api] = await Promise.all([startOwnWorker(env, path.join(dir, 'worker.log')), startOwnApi(env, path.join(dir, 'api.log'))]);
  receiver = await startReceiver((_req, n) => ({ status: n % 3 === 0 ? 500 : 200 }));
  gone = http.createServer((_req, res) => res.writeHead(410).end());
  await new Promise<void>((done) => gone.listen(0, '127.0.0.1', done));
  goneUrl = `http://127.0.0.1:${(gone.address() as AddressInfo).port}/gone`;
  client = new Client({ connection: await Connection.connect({ address: process.env.TEMPORAL_ADDRESS }), dataConverter: testDataConverter() });
}, 240_000);

afterAll(async () => {
  await client?.connection.close();
  await receiver?.close();
  gone?.close();
  await stopProcess(api?.process);
  await stopProcess(worker?.process);
});

it('keeps every secret out of logs, error replies, admin responses, Temporal history and the database file', async () => {
  // Sources: the write key is shown once, at creation, and nowhere after.
  const created = await call('create source', 'POST', '/admin/sources', { name: 'secrets' });
  expect(created.status).toBe(201);
  writeKey = created.json().writeKey;
  const sourceId = created.json().id;
  replies.pop(); // the one reply that carries the write key by design
  await call('get source', 'GET', `/admin/sources/${sourceId}`);
  await call('list sources', 'GET', '/admin/sources');

  // Destinations, with every kind of secret, read back and rotated.
  const destination = await call('create destination', 'POST', `/admin/sources/${sourceId}/destinations`, {
    enabled: true,
    sharedSecret: SHARED_SECRET,
    signingSecret: SIGNING_SECRET,
    webhooks: [
      { url: goneUrl, headers: { Authorization: HEADER_VALUE } },
      { url: 'http://169.254.169.254/latest/meta-data/', headers: { Authorization: HEADER_VALUE } },
      { url: receiver.url, headers: { Authorization: HEADER_VALUE } },
    ],
  });
  expect(destination.status).toBe(201);
  const destinationId = destination.json().id;
  await call('get destination', 'GET', `/admin/destinations/${destinationId}`);
  await call('list destinations', 'GET', `/admin/sources/${sourceId}/destinations`);
  await call('rotate', 'PATCH', `/admin/destinations/${destinationId}`, { signingSecret: NEXT_SIGNING_SECRET, signingSecretOverlap: '1h' });

  // Error replies that could be tempted to repeat what they were given.
  expect((await call('bad header value', 'PATCH', `/admin/destinations/${destinationId}`, { webhooks: [{ url: receiver.url, headers: { 'X-A': `${HEADER_VALUE}\r\nX-Injected: 1` } }] })).status).toBe(400);
  expect((await call('bad signing secret', 'PATCH', `/admin/destinations/${destinationId}`, { signingSecret: `not-${SIGNING_SECRET}` })).status).toBe(400);
  expect((await call('bad admin token', 'GET', '/admin/sources', undefined, { authorization: `Bearer ${ADMIN_TOKEN}x` })).status).toBe(401);
  expect((await call('unknown write key', 'POST', '/v1/track', { userId: 'u', event: 'E' }, basic(WRONG_WRITE_KEY))).status).toBe(401);
  expect((await call('write key in body, bad', 'POST', '/v1/track', { userId: 'u', event: 'E', writeKey: WRONG_WRITE_KEY }, { authorization: '' })).status).toBe(401);

  // Deliveries that succeed, fail over, retry, get switched off (410) and are refused (egress).
  for (let i = 0; i < 6; i++) {
    const messageId = `secret-msg-${i}`;
    const auth = i % 2 ? basic(writeKey) : { authorization: '' };
    const res = await call(`track ${i}`, 'POST', '/v1/track', { userId: 'u', event: 'Secret?', messageId, ...(i % 2 === 0 && { writeKey }) }, auth);
    expect(res.status).toBe(200);
    workflowIds.push(deliveryWorkflowId(sourceId, messageId));
  }
  for (const id of workflowIds) await client.workflow.getHandle(id).result().catch(() => undefined);
  expect(receiver.requests.length).toBeGreaterThanOrEqual(6);
  // The secrets did their work on the wire…
  expect(receiver.requests.every((r) => r.headers.authorization === HEADER_VALUE && typeof r.headers['x-signature'] === 'string')).toBe(true);
  const view = await call('after deliveries', 'GET', `/admin/destinations/${destinationId}`);
  expect(view.json().webhooks[0].disabled.reason).toMatch(/410 Gone/);

  // …and are nowhere else.
  const secrets: Record<string, string> = {
    'write key': writeKey,
    'admin token': ADMIN_TOKEN,
    'shared secret': SHARED_SECRET,
    'header value': HEADER_VALUE.slice('Bearer '.length),
    'signing secret': SIGNING_KEY.toString('base64'),
    'rotated-in signing secret': NEXT_SIGNING_KEY.toString('base64'),
    'unknown write key': WRONG_WRITE_KEY,
  };
  const places: Record<string, string> = {
    'API log': readLog(api.logFile),
    'worker log': readLog(worker.logFile),
    'admin and error replies': replies.map((r) => `${r.what}: ${r.body}`).join('\n'),
  };
  for (const id of workflowIds) places[`history of ${id}`] = await workflowHistoryText(id);
  expect(places['API log']).toContain('"url":"/v1/track"'); // request lines were written and searched
  expect(places['worker log']).toContain('webhook attempt failed');
  expect(places['worker log']).toContain('webhook URL switched off');
  for (const [secret, value] of Object.entries(secrets)) {
    for (const [place, text] of Object.entries(places)) {
      if (text.includes(value)) throw new Error(`the ${secret} appears in the ${place}`);
      // Also as base64, the form Temporal payloads and Basic auth take.
      if (text.includes(Buffer.from(value).toString('base64'))) throw new Error(`the ${secret} appears base64-encoded in the ${place}`);
    }
  }

  // A copy of the database file gives none of them away: the write key is stored hashed, the
  // receiver credentials (shared secret, header values, signing secrets) sealed under the payload keys.
  const databasePath = process.env.DATABASE_PATH!;
  const stored = Buffer.concat([databasePath, `${databasePath}-wal`].filter(existsSync).map((file) => readFileSync(file)));
  for (const [secret, value] of Object.entries(secrets)) {
    if (stored.includes(Buffer.from(value)) || stored.includes(Buffer.from(Buffer.from(value).toString('base64')))) throw new Error(`the ${secret} appears in the database file`);
  }
}, 180_000);
