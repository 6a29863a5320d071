import net from 'node:net';
import path from 'node:path';
import { deliveryWorkflowId } from '../../src/delivery/ids';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { faultDir, sleep, startOwnApi, startOwnWorker, stopProcess, type OwnApi, type OwnWorker } from '../helpers/faults';
import { basicAuth, deliveryResult, startSystem } from '../helpers/system';

/** Graceful shutdown on SIGTERM, on real processes of this file's own. */

const receivers: Receiver[] = [];
const processes: (OwnApi | OwnWorker)[] = [];
afterAll(async () => {
  for (const p of processes) await stopProcess(p.process, 'SIGKILL');
  await Promise.all(receivers.map((r) => r.close()));
});

function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

function readReply(socket: net.Socket): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

it('API: stops accepting connections, finishes the request in flight (200, delivered), then exits 0', async () => {
  const receiver = await startReceiver();
  receivers.push(receiver);
  const system = await startSystem();
  try {
    const { source, writeKey } = await system.store.sources.create('shutdown api').then(async (s) => {
      await system.store.destinations.create(s.source.id, { enabled: true, webhooks: [{ url: receiver.url, headers: {} }] });
      return s;
    });
    // The run's worker delivers: this API starts workflows on the run's task queue.
    const api = await startOwnApi({ ADMIN_TOKEN: 'shutdown-admin-token-0123456789abcdef' }, path.join(faultDir('shutdown-api'), 'api.log'));
    processes.push(api);
    const port = Number(new URL(api.url).port);

    // A request whose body is still arriving when SIGTERM comes.
    const body = JSON.stringify({ userId: 'u', event: 'Drained', messageId: 'drained-1' });
    const socket = await connect(port);
    const reply = readReply(socket);
    socket.write(`POST /v1/track HTTP/1.1\r\nHost: x\r\nAuthorization: ${basicAuth(writeKey)}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`);
    socket.write(body.slice(0, 10));
    await sleep(300);
    api.process.kill('SIGTERM');
    await sleep(500);

    // No new connections once shutting down…
    await expect(connect(port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(api.process.exitCode).toBeNull();
    // …but the request in flight is served to the end, and its connection is then closed.
    socket.write(body.slice(10));
    expect(await reply).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*connection: close\r\n[\s\S]*\{"success":true\}$/i);
    expect(await api.exited).toBe(0);
    expect(await deliveryResult(system.client, source.id, 'drained-1')).toMatchObject({ ok: true });
    await receiver.waitForMessage('drained-1');
  } finally {
    await system.close();
  }
}, 180_000);

it('API under load: every call acknowledged before or during the SIGTERM is delivered; the rest are refused, none left unanswered', async () => {
  const SENDERS = 8;
  const receiver = await startReceiver();
  receivers.push(receiver);
  const system = await startSystem();
  try {
    const { source, writeKey } = await system.store.sources.create('shutdown api load');
    await system.store.destinations.create(source.id, { enabled: true, webhooks: [{ url: receiver.url, headers: {} }] });
    const api = await startOwnApi({ ADMIN_TOKEN: 'shutdown-admin-token-0123456789abcdef', INGEST_RATE_LIMIT: '0' }, path.join(faultDir('shutdown-api-load'), 'api.log'));
    processes.push(api);

    // Senders on keep-alive connections, one call after another, until the API is gone.
    const acknowledged: string[] = [];
    const answers: Record<string, number> = {};
    let n = 0;
    let exited = false;
    void api.exited.then(() => (exited = true));
    const sender = async () => {
      while (!exited) {
        const messageId = `load-${++n}`;
        try {
          const res = await fetch(`${api.url}/v1/track`, {
            method: 'POST',
            headers: { authorization: basicAuth(writeKey), 'content-type': 'application/json' },
            body: JSON.stringify({ userId: 'u', event: 'Under load', messageId }),
            signal: AbortSignal.timeout(30_000),
          });
          await res.text();
          answers[res.status] = (answers[res.status] ?? 0) + 1;
          if (res.status === 200) acknowledged.push(messageId);
        } catch (err) {
          // Refused or closed once the API stopped accepting: not acknowledged. A hung call is a failure.
          if ((err as Error).name === 'TimeoutError') throw err;
          answers.refused = (answers.refused ?? 0) + 1;
          await sleep(20);
        }
      }
    };
    const senders = Array.from({ length: SENDERS }, sender);
    await sleep(1_500);
    const acknowledgedBeforeSignal = acknowledged.length;
    api.process.kill('SIGTERM');
    expect(await api.exited).toBe(0);
    await Promise.all(senders);

    expect(acknowledgedBeforeSignal).toBeGreaterThan(0);
    // Calls in flight at the signal were served to the end: the "during" case was exercised.
    expect(acknowledged.length).toBeGreaterThan(acknowledgedBeforeSignal);
    expect(Object.keys(answers).filter((status) => status !== '200' && status !== '503' && status !== 'refused')).toEqual([]);
    for (const messageId of acknowledged) await receiver.waitForMessage(messageId, 60_000);
  } finally {
    await system.close();
  }
}, 180_000);

it('worker: finishes the POSTs in flight before exiting 0, so none is sent twice by the next worker', async () => {
  const ANSWER_AFTER_MS = 1_500;
  const receiver = await startReceiver(() => ({ status: 200, delayMs: ANSWER_AFTER_MS }));
  receivers.push(receiver);
  const queue = `shutdown-worker-${process.pid}`;
  const dir = faultDir('shutdown-worker');
  // DELIVERY_TIMEOUT sets the worker's grace time for in-flight attempts (timeout + 1 s).
  const env = { TEMPORAL_TASK_QUEUE: queue, DELIVERY_TIMEOUT: '5s' };
  const first = await startOwnWorker(env, path.join(dir, 'worker-1.log'));
  processes.push(first);
  const system = await startSystem({ temporalTaskQueue: queue, deliveryTimeout: 5_000 });
  try {
    const { source, writeKey } = await system.store.sources.create('shutdown worker');
    await system.store.destinations.create(source.id, { enabled: true, webhooks: [{ url: receiver.url, headers: {} }] });
    const ids = Array.from({ length: 6 }, (_, i) => `in-flight-${i}`);
    const res = await system.app.inject({
      method: 'POST',
      url: '/v1/batch',
      headers: { authorization: basicAuth(writeKey) },
      payload: { batch: ids.map((messageId) => ({ type: 'track', userId: 'u', event: 'Drain', messageId })) },
    });
    expect(res.statusCode).toBe(200);

    // Every attempt has reached the receiver, none has been answered yet: SIGTERM now.
    await receiver.waitForRequests(ids.length, 60_000);
    const signalledAt = Date.now();
    first.process.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    // It waited for the answers (they come ANSWER_AFTER_MS after each request) and no longer than its grace.
    expect(Date.now()).toBeGreaterThanOrEqual(Math.max(...receiver.requests.map((r) => r.at)) + ANSWER_AFTER_MS - 100);
    expect(Date.now() - signalledAt).toBeLessThan(6_000 + 2_000);

    const second = await startOwnWorker(env, path.join(dir, 'worker-2.log'));
    processes.push(second);
    for (const id of ids) expect(await deliveryResult(system.client, source.id, id)).toMatchObject({ ok: true, report: { destinations: [{ status: 'delivered', rounds: 1 }] } });
    expect(receiver.requests).toHaveLength(ids.length);
    for (const id of ids) {
      const history = await system.client.workflow.getHandle(deliveryWorkflowId(source.id, id)).fetchHistory();
      expect((history.events ?? []).some((e) => e.activityTaskTimedOutEventAttributes)).toBe(false);
    }
  } finally {
    await system.close();
  }
}, 180_000);
