import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { deliveryWorkflowId } from '../../src/delivery/ids';
import { generateTestPki } from '../helpers/certs';
import { faultDir, startOwnWorker, stopProcess, type OwnWorker } from '../helpers/faults';
import { ADMIN_TOKEN, decodedWorkflowHistoryText, deliveryResult, send, startSystem, type TestSystem } from '../helpers/system';

/**
 * Mutual TLS to a receiver that requires a client certificate. The test makes its own CA
 * (openssl) and hands it to a worker of this file's own through NODE_EXTRA_CA_CERTS, so the
 * receiver's certificate verifies as a real one would (self-signed stays refused).
 */

const queue = `actions-mtls-${process.pid}`;
const dir = faultDir('actions-mtls');
const pki = generateTestPki(path.join(dir, 'pki'));
const pem = (file: string) => readFileSync(file, 'utf8');
let worker: OwnWorker | undefined;
let system: TestSystem;
let server: https.Server;
let url: string;
const seen: { path: string; clientCn?: string; body: string }[] = [];

beforeAll(async () => {
  server = https.createServer({ key: pem(pki.serverKey), cert: pem(pki.serverCert), ca: pem(pki.caCert), requestCert: true, rejectUnauthorized: true }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ path: req.url ?? '', clientCn: String((req.socket as TLSSocket).getPeerCertificate().subject?.CN), body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200).end('{}');
    });
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/mtls`;
  worker = await startOwnWorker({ TEMPORAL_TASK_QUEUE: queue, NODE_EXTRA_CA_CERTS: pki.caCert }, path.join(dir, 'worker.log'));
  system = await startSystem({ temporalTaskQueue: queue, deliveryRetryWindow: 4_000 });
}, 240_000);

afterAll(async () => {
  await stopProcess(worker?.process);
  await system?.close();
  server?.closeAllConnections();
  await new Promise((done) => server?.close(done));
});

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

async function destination(body: Record<string, unknown>) {
  const { source, writeKey } = await system.store.sources.create(`mtls ${expect.getState().currentTestName ?? ''}`.slice(0, 200));
  const created = await system.app.inject({ method: 'POST', url: `/admin/sources/${source.id}/destinations`, headers: admin, payload: { enabled: true, ...body } });
  expect(created.statusCode).toBe(201);
  return { source, writeKey, answer: created.body };
}

it('presents the destination\'s client certificate to a receiver that requires one, on either destination type', async () => {
  const tls = { certificate: pem(pki.clientCert), privateKey: pem(pki.clientKey) };
  const seed = await destination({ webhooks: [{ url }], tls });
  const actions = await destination({ type: 'actions', mappings: [{ name: 'mTLS', enabled: true, trigger: 'all', settings: { url: `${url}/actions`, method: 'POST', data: { id: { '@path': '$.messageId' } } } }], tls });
  for (const answer of [seed.answer, actions.answer]) {
    expect(JSON.parse(answer)).toMatchObject({ tlsSet: true });
    expect(answer).not.toContain('PRIVATE KEY');
  }
  await send(system.app, seed.writeKey, 'track', { userId: 'u', event: 'E', messageId: 'mtls-seed' });
  await send(system.app, actions.writeKey, 'track', { userId: 'u', event: 'E', messageId: 'mtls-actions' });
  expect(await deliveryResult(system.client, seed.source.id, 'mtls-seed')).toMatchObject({ ok: true });
  expect(await deliveryResult(system.client, actions.source.id, 'mtls-actions')).toMatchObject({ ok: true });
  expect(seen.map((s) => [s.path, s.clientCn])).toEqual(expect.arrayContaining([['/mtls', 'switchyard-test-client'], ['/mtls/actions', 'switchyard-test-client']]));
  expect(JSON.parse(seen.find((s) => s.path === '/mtls/actions')!.body)).toEqual({ id: 'mtls-actions' });
  const history = await decodedWorkflowHistoryText(system, deliveryWorkflowId(seed.source.id, 'mtls-seed'));
  expect(history).toContain('mtls-seed');
  expect(history).not.toContain('PRIVATE KEY');
  expect(readFileSync(worker!.logFile, 'utf8')).not.toContain('PRIVATE KEY');
}, 60_000);

it('is refused by that receiver without a client certificate: nothing is accepted, the delivery fails', async () => {
  const before = seen.length;
  const { source, writeKey } = await destination({ webhooks: [{ url }] });
  await send(system.app, writeKey, 'track', { userId: 'u', event: 'E', messageId: 'mtls-none' });
  expect(await deliveryResult(system.client, source.id, 'mtls-none')).toMatchObject({ ok: false });
  expect(seen.length).toBe(before);
}, 60_000);
