/**
 * End to end: the client library → the real ingestion API (listening on a real port) → real
 * Temporal (the run's dev server and worker process) → a real webhook receiver. The guarantee under
 * test is the one a user of the library relies on: every message reaches the webhook exactly once,
 * including when a batch is sent twice because its acknowledgement was lost.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { buffer } from 'node:stream/consumers';
import { Analytics, type EnqueueResult, type Logger } from '../../src/client';
import { deliveryOutline } from '../helpers/delivery-outline';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { deliveryResult, sourceWithDestination, startSystem, type TestSystem } from '../helpers/system';

let system: TestSystem;
let receiver: Receiver;
let endpoint: string;

const silent: Logger = { debug: () => {}, warn: () => {}, error: () => {} };

beforeAll(async () => {
  system = await startSystem();
  receiver = await startReceiver();
  await system.app.listen({ port: 0, host: '127.0.0.1' });
  endpoint = `http://127.0.0.1:${(system.app.server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await receiver.close();
  await system.close();
});

/** A fresh source whose one destination posts to the receiver, so tests do not see each other's messages. */
async function newSource() {
  const { writeKey, source } = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
  return { writeKey, sourceId: source.id };
}

const messageIdOf = (result: EnqueueResult) => {
  if (!result.ok) throw result.error;
  return result.messageId;
};

/** Waits for every message's delivery workflow to finish, then counts what the receiver got per messageId. */
async function deliveriesPerMessage(sourceId: string, messageIds: string[]): Promise<Map<string, number>> {
  for (const id of messageIds) {
    const result = await deliveryResult(system.client, sourceId, id);
    expect(result).toMatchObject({ ok: true });
  }
  const wanted = new Set(messageIds);
  const counts = new Map<string, number>();
  for (const request of receiver.requests) {
    const { messageId } = JSON.parse(request.body) as { messageId: string };
    if (wanted.has(messageId)) counts.set(messageId, (counts.get(messageId) ?? 0) + 1);
  }
  return counts;
}

it('delivers every call type sent through the client to the webhook exactly once', async () => {
  const { writeKey, sourceId } = await newSource();
  const analytics = new Analytics({ writeKey, endpoint, flushAt: 4, flushAfter: 100, logger: silent });
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    ids.push(messageIdOf(analytics.identify({ userId: `e2e-${i}`, traits: { plan: 'pro' } })));
    ids.push(messageIdOf(analytics.track({ userId: `e2e-${i}`, event: 'Order Completed', properties: { total: i } })));
    ids.push(messageIdOf(analytics.page({ anonymousId: `anon-${i}`, name: 'Pricing', properties: { path: '/pricing' } })));
    ids.push(messageIdOf(analytics.screen({ userId: `e2e-${i}`, name: 'Home' })));
    ids.push(messageIdOf(analytics.group({ userId: `e2e-${i}`, groupId: 'acme', traits: { seats: 3 } })));
    ids.push(messageIdOf(analytics.alias({ userId: `e2e-${i}`, previousId: `anon-${i}` })));
  }
  // Not forwarded: the seed's integrations rule, applied by the server to what the client sent.
  const skipped = messageIdOf(analytics.track({ userId: 'e2e-x', event: 'Internal', integrations: { All: false } }));

  expect(await analytics.close()).toEqual({ delivered: 19, failed: 0 });

  const counts = await deliveriesPerMessage(sourceId, ids);
  expect([...counts.keys()].sort()).toEqual([...ids].sort());
  // Exactly once without faults (docs/reliability.md); a message sent twice names its history.
  const repeated = [...counts].filter(([, n]) => n !== 1);
  expect(await Promise.all(repeated.map(async ([id, n]) => `${id} sent ${n} times; ${await deliveryOutline(system.client, sourceId, id)}`))).toEqual([]);
  expect(receiver.requests.some((r) => r.body.includes(skipped))).toBe(false);

  const alias = receiver.requests.map((r) => JSON.parse(r.body)).find((m) => m.messageId === ids[5]);
  expect(alias).toMatchObject({ version: 1, type: 'alias', 'Previous ID': 'anon-0', 'User ID': 'e2e-0' });
});

it('delivers once when a batch is re-sent because its acknowledgement was lost', async () => {
  const { writeKey, sourceId } = await newSource();
  // Between client and API: forwards every request, but drops the connection instead of passing
  // on the API's first answer, so the client sees a network error for a batch the API accepted.
  let forwarded = 0;
  const forward = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const received = await buffer(req);
    const first = forwarded++ === 0;
    const answer = await fetch(`${endpoint}${req.url}`, { method: 'POST', headers: { authorization: req.headers.authorization!, 'content-type': 'application/json' }, body: received });
    const body = await answer.text();
    if (first) return void req.socket.destroy();
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(body);
  };
  const proxy = http.createServer((req, res) => void forward(req, res));
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  try {
    const viaProxy = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const analytics = new Analytics({ writeKey, endpoint: viaProxy, flushAt: 100, backoff: { initial: 50, max: 200 }, logger: silent });
    const ids = Array.from({ length: 5 }, (_, i) => messageIdOf(analytics.track({ userId: `retry-${i}`, event: 'Paid' })));

    expect(await analytics.close()).toEqual({ delivered: 5, failed: 0 });
    expect(forwarded).toBe(2);

    const counts = await deliveriesPerMessage(sourceId, ids);
    expect(ids.map((id) => counts.get(id))).toEqual([1, 1, 1, 1, 1]);
  } finally {
    proxy.closeAllConnections();
    await new Promise((resolve) => proxy.close(resolve));
  }
});
