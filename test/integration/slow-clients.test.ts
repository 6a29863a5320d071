import type { AddressInfo } from 'node:net';
import { WorkflowNotFoundError } from '@temporalio/client';
import { deliveryWorkflowId } from '../../src/delivery/ids';
import { rawExchange, type RawReply } from '../helpers/raw-http';
import { basicAuth, deliveryResult, sourceWithDestination, startSystem, type TestSystem } from '../helpers/system';
import { startReceiver, type Receiver } from '../helpers/receiver';

/**
 * Slow clients (slowloris) on a real socket: a client that trickles its headers past
 * HTTP_HEADERS_TIMEOUT, or its body past HTTP_REQUEST_TIMEOUT, gets a 408 JSON error and the
 * connection closed instead of holding it open for ever; a 408 starts no delivery, so the
 * client's retry loses nothing. A slow but timely client, or a slow reply, is not cut.
 */

const HEADERS_TIMEOUT = 1_000;
const REQUEST_TIMEOUT = 2_000;

let system: TestSystem;
let receiver: Receiver;
let port: number;
let writeKey: string;
let sourceId: string;

beforeAll(async () => {
  system = await startSystem({ httpHeadersTimeout: HEADERS_TIMEOUT, httpRequestTimeout: REQUEST_TIMEOUT });
  receiver = await startReceiver();
  ({ writeKey, source: { id: sourceId } } = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] }));
  await system.app.listen({ port: 0, host: '127.0.0.1' });
  port = (system.app.server.address() as AddressInfo).port;
});
afterAll(async () => {
  await receiver.close();
  await system.close();
});

const trackRequest = (messageId: string) => {
  const body = JSON.stringify({ userId: 'u', event: 'Slow', messageId });
  const head = `POST /v1/track HTTP/1.1\r\nHost: x\r\nAuthorization: ${basicAuth(writeKey)}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`;
  return { head, body };
};

async function expectNoWorkflow(messageId: string): Promise<void> {
  await expect(system.client.workflow.getHandle(deliveryWorkflowId(sourceId, messageId)).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
}

function expectTimeoutReply(reply: RawReply, after: number): void {
  expect(reply.status).toBe(408);
  expect(reply.contentType).toMatch(/^application\/json/);
  expect(JSON.parse(reply.body)).toEqual({ code: 'request_timeout', message: expect.any(String) });
  expect(reply.elapsedMs).toBeGreaterThanOrEqual(after);
}

describe('slow clients', () => {
  it('answers 408 to headers trickled past HTTP_HEADERS_TIMEOUT and starts nothing', async () => {
    const { head } = trackRequest('slow-headers');
    // One byte every 300 ms: each write is progress, but the headers never finish in time.
    const reply = await rawExchange(port, head.split(''), { gapMs: 300, timeoutMs: 20_000 });
    expectTimeoutReply(reply, HEADERS_TIMEOUT);
    await expectNoWorkflow('slow-headers');
  }, 30_000);

  it('answers 408 to a connection that sends only blank lines', async () => {
    const reply = await rawExchange(port, ['\r\n', '\r\n'], { gapMs: 100, timeoutMs: 20_000 });
    expectTimeoutReply(reply, HEADERS_TIMEOUT);
  }, 30_000);

  it('answers 408 to a body trickled past HTTP_REQUEST_TIMEOUT and starts nothing', async () => {
    const { head, body } = trackRequest('slow-body');
    const reply = await rawExchange(port, [head, ...body.split('')], { gapMs: 300, timeoutMs: 20_000 });
    expectTimeoutReply(reply, REQUEST_TIMEOUT);
    await expectNoWorkflow('slow-body');
  }, 30_000);

  it('accepts and delivers a request whose pieces arrive slowly but within the timeouts', async () => {
    const { head, body } = trackRequest('slow-but-timely');
    const cut = head.length >> 1;
    const reply = await rawExchange(port, [head.slice(0, cut), head.slice(cut), body], { gapMs: HEADERS_TIMEOUT / 4, timeoutMs: 20_000 });
    expect(reply.status).toBe(200);
    expect(await deliveryResult(system.client, sourceId, 'slow-but-timely')).toMatchObject({ ok: true });
    expect(receiver.requests.some((r) => (JSON.parse(r.body) as { messageId?: string }).messageId === 'slow-but-timely')).toBe(true);
  }, 30_000);
});
