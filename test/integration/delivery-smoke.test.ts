import { createHmac } from 'node:crypto';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { deliveryResult, send, sourceWithDestination, startSystem, type TestSystem } from '../helpers/system';

let system: TestSystem;
let receiver: Receiver;
beforeAll(async () => {
  system = await startSystem();
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await system.close();
});

it('delivers a signed track call that verifies with the documented recipe', async () => {
  const { source, writeKey } = await sourceWithDestination(system.store, { sharedSecret: 's3cret', webhooks: [{ url: receiver.url, headers: {} }] });
  await send(system.app, writeKey, 'track', { userId: 'u1', event: 'Order Completed', messageId: 'm-smoke', properties: { total: 5 } });
  const result = await deliveryResult(system.client, source.id, 'm-smoke');
  expect(result.ok).toBe(true);
  const [request] = await receiver.waitForRequests(1);
  const expected = createHmac('sha1', 's3cret').update(JSON.stringify(JSON.parse(request.body))).digest('hex');
  expect(request.headers['x-signature']).toBe(expected);
}, 120_000);
