import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { deliveryWorkflowId } from '../../src/delivery/ids';
import { buildApp } from '../../src/api/app';
import { deliveriesOptions, temporalDeliveries } from '../../src/temporal/temporal-deliveries';
import { faultDir, readLog, startOwnApi, startOwnWorker } from '../helpers/faults';
import { testKeyring } from '../helpers/payload-keys';
import { ROOT, stopProcess } from '../helpers/processes';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { ADMIN_TOKEN, decodedWorkflowHistoryText, deliveryResult, send, sourceWithDestination, type TestSystem, useSystem, workflowHistoryText } from '../helpers/system';
import { nodeArgsFor } from '../helpers/compiled-source';

/**
 * Nothing a user sent is readable in Temporal without the payload keys. Histories are read
 * with the real `temporal` CLI, as anyone with access to Temporal (or its Web UI) would: without a
 * codec, and through Switchyard's codec server with the admin token.
 */
const UI_ORIGIN = 'http://ui.example.test:8233';

let system: TestSystem;
let receiver: Receiver;
let refusing: Receiver;
const others: Receiver[] = [];
useSystem(
  (s, r) => {
    system = s;
    receiver = r;
  },
  { overrides: { codecCorsOrigins: [UI_ORIGIN] }, alsoClose: others },
);
beforeAll(async () => {
  refusing = await startReceiver(() => ({ status: 400 }));
  others.push(refusing);
});

const CANARY_EMAIL = 'canary-5b1e@example.com';
const CANARY_EVENT = 'Canary Event 5b1e';
const canaryTrack = (messageId: string) => ({
  messageId,
  userId: 'u-canary',
  event: CANARY_EVENT,
  properties: { email: CANARY_EMAIL },
  context: { traits: { email: CANARY_EMAIL } },
});

describe('a delivered track in Temporal', () => {
  let workflowId: string;
  let sourceId: string;
  beforeAll(async () => {
    const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
    await send(system.app, writeKey, 'track', canaryTrack('canary-delivered'));
    expect(await deliveryResult(system.client, source.id, 'canary-delivered')).toMatchObject({ ok: true, report: { destinations: [{ status: 'delivered' }] } });
    expect(receiver.requests.some((r) => r.body.includes(CANARY_EMAIL))).toBe(true);
    sourceId = source.id;
    workflowId = deliveryWorkflowId(source.id, 'canary-delivered');
  });

  it('leaves no plaintext trace of the email or the event name in `temporal workflow show` without a codec', async () => {
    const history = await workflowHistoryText(workflowId);
    expect(history).toContain(Buffer.from('binary/encrypted').toString('base64'));
    expect(history).not.toContain(CANARY_EMAIL);
    expect(history).not.toContain(CANARY_EVENT);
  });

  it('decodes through the codec server with the admin token', async () => {
    const history = await decodedWorkflowHistoryText(system, workflowId);
    expect(history).toContain(CANARY_EMAIL);
    expect(history).toContain(CANARY_EVENT);
  });

  it('shows the operator the decrypted body in the admin delivery detail', async () => {
    const detail = await system.app.inject({ method: 'GET', url: `/admin/sources/${sourceId}/deliveries/canary-delivered`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(detail.statusCode).toBe(200);
    expect(detail.json()).toMatchObject({ status: 'delivered', message: { event: CANARY_EVENT, properties: { email: CANARY_EMAIL } } });
  });
});

describe('a failed delivery in Temporal', () => {
  it('keeps its failure messages encoded: no reason in plaintext, decoded through the codec server', async () => {
    const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: refusing.url, headers: {} }] });
    await send(system.app, writeKey, 'track', canaryTrack('canary-failed'));
    const result = await deliveryResult(system.client, source.id, 'canary-failed');
    // The client's codec and failure converter give the message back whole.
    expect(result).toMatchObject({ ok: false, message: expect.stringMatching(/every webhook failed permanently/) });
    const workflowId = deliveryWorkflowId(source.id, 'canary-failed');

    const raw = await workflowHistoryText(workflowId);
    expect(raw).toContain('Encoded failure');
    for (const secret of [CANARY_EMAIL, CANARY_EVENT, 'every webhook failed permanently', 'HTTP 400']) expect(raw).not.toContain(secret);

    const decoded = await decodedWorkflowHistoryText(system, workflowId);
    expect(decoded).toContain('every webhook failed permanently');
    expect(decoded).toContain(CANARY_EMAIL);
  });
});

describe('the codec server', () => {
  const plain: Payload = defaultPayloadConverter.toPayload({ email: CANARY_EMAIL });
  const asJson = (payloads: Payload[]) => ({
    payloads: payloads.map((p) => ({
      metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
      data: Buffer.from(p.data ?? []).toString('base64'),
    })),
  });
  const codec = (path: string, body: unknown, headers: Record<string, string> = { authorization: `Bearer ${ADMIN_TOKEN}` }) =>
    system.app.inject({ method: 'POST', url: path, headers: { 'content-type': 'application/json', 'x-namespace': 'default', ...headers }, payload: JSON.stringify(body) });

  it('answers 401 without the admin token, and with a wrong one', async () => {
    expect((await codec('/codec/decode', asJson([plain]), {})).statusCode).toBe(401);
    expect((await codec('/codec/decode', asJson([plain]), { authorization: `Bearer ${ADMIN_TOKEN}x` })).statusCode).toBe(401);
    expect((await codec('/codec/encode', asJson([plain]), {})).statusCode).toBe(401);
  });

  it('encodes and decodes back (any path prefix), hiding the contents in between', async () => {
    const encoded = await codec('/codec/encode', asJson([plain]));
    expect(encoded.statusCode).toBe(200);
    const [payload] = encoded.json().payloads;
    expect(Buffer.from(payload.metadata.encoding, 'base64').toString()).toBe('binary/encrypted');
    expect(Buffer.from(payload.data, 'base64').toString('latin1')).not.toContain(CANARY_EMAIL);
    for (const path of ['/codec/decode', '/codec/default/decode']) {
      const decoded = await codec(path, encoded.json());
      expect(decoded.statusCode).toBe(200);
      expect(decoded.json()).toEqual(asJson([plain]));
    }
  });

  it('names the key id of a payload it cannot decrypt, and nothing else of it', async () => {
    const encoded = (await codec('/codec/encode', asJson([plain]))).json();
    encoded.payloads[0].metadata['encryption-key-id'] = Buffer.from('retired-1').toString('base64');
    const reply = await codec('/codec/decode', encoded);
    expect(reply.statusCode).toBe(400);
    expect(reply.json().message).toMatch(/key "retired-1"/);
    expect(reply.body).not.toContain(encoded.payloads[0].data);
  });

  it('answers CORS only for CODEC_CORS_ORIGINS, with credentials', async () => {
    const preflight = (origin: string) =>
      system.app.inject({ method: 'OPTIONS', url: '/codec/decode', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type,x-namespace' } });
    const allowed = await preflight(UI_ORIGIN);
    expect(allowed.headers['access-control-allow-origin']).toBe(UI_ORIGIN);
    expect(allowed.headers['access-control-allow-credentials']).toBe('true');
    expect(String(allowed.headers['access-control-allow-headers']).toLowerCase()).toContain('x-namespace');
    const other = await preflight('https://evil.example.test');
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    // The request itself from another origin is refused outright, token or not.
    expect((await codec('/codec/decode', asJson([plain]), { authorization: `Bearer ${ADMIN_TOKEN}`, origin: 'https://evil.example.test' })).statusCode).toBe(403);
    const fromUi = await codec('/codec/decode', asJson([plain]), { authorization: `Bearer ${ADMIN_TOKEN}`, origin: UI_ORIGIN });
    expect(fromUi.statusCode).toBe(200);
    expect(fromUi.headers['access-control-allow-origin']).toBe(UI_ORIGIN);
  });

  it("answers without a token only in npm start's setup, and only over loopback", async () => {
    const local = await buildApp({ config: system.config, store: system.store, deliveries: temporalDeliveries(system.client, deliveriesOptions(system.config, testKeyring())), keyring: testKeyring(), codecOpenToLoopback: true });
    try {
      const post = (remoteAddress: string, headers: Record<string, string> = {}) =>
        local.inject({ method: 'POST', url: '/codec/decode', remoteAddress, headers: { 'content-type': 'application/json', ...headers }, payload: JSON.stringify(asJson([plain])) });
      expect((await post('127.0.0.1')).statusCode).toBe(200);
      expect((await post('::1')).statusCode).toBe(200);
      expect((await post('192.0.2.7')).statusCode).toBe(401);
      // Another page in the local browser is no UI of CODEC_CORS_ORIGINS.
      expect((await post('127.0.0.1', { origin: 'https://evil.example.test' })).statusCode).toBe(403);
    } finally {
      await local.close();
    }
  });
});

describe('start-up without keys', () => {
  const run = promisify(execFile);
  it.each(['worker', 'server'])('src/%s.ts refuses to start, naming PAYLOAD_KEYS', async (entry) => {
    const env = { ...process.env, PAYLOAD_KEYS: '', PAYLOAD_KEYS_FILE: '', ADMIN_TOKEN, PORT: '0', HOST: '127.0.0.1', TEMPORAL_TASK_QUEUE: `no-keys-${process.pid}` };
    const failed = await run(process.execPath, nodeArgsFor(`src/${entry}.ts`), { cwd: ROOT, env, timeout: 60_000 }).then(
      () => undefined,
      (err: { code?: number; stderr?: string }) => err,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toContain('No payload keys: set PAYLOAD_KEYS');
  });

  it('src/worker.ts starts without keys when PAYLOAD_ENCRYPTION=off says so on purpose', async () => {
    const dir = faultDir('encryption-off');
    const worker = await startOwnWorker({ PAYLOAD_ENCRYPTION: 'off', PAYLOAD_KEYS: '', PAYLOAD_KEYS_FILE: '', TEMPORAL_TASK_QUEUE: `encryption-off-${process.pid}` }, path.join(dir, 'worker.log'));
    await stopProcess(worker.process);
  }, 120_000);

  it('src/server.ts starts without keys when PAYLOAD_ENCRYPTION=off, warning that receiver credentials are stored in plaintext', async () => {
    const dir = faultDir('encryption-off-api');
    const api = await startOwnApi({ PAYLOAD_ENCRYPTION: 'off', PAYLOAD_KEYS: '', PAYLOAD_KEYS_FILE: '', ADMIN_TOKEN, TEMPORAL_TASK_QUEUE: `encryption-off-${process.pid}` }, path.join(dir, 'api.log'));
    await stopProcess(api.process);
    expect(readLog(api.logFile)).toContain('receiver credentials (shared secrets, signing secrets, header values) are stored in plaintext');
  }, 120_000);
});
