import type { AddressInfo } from 'node:net';
import { Analytics } from '@segment/analytics-node';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { deliveryResult, sourceWithDestination, startSystem, type TestSystem } from '../helpers/system';

/** The promise to teams: their existing Segment library sends to Switchyard unchanged, only the host differs. */
let system: TestSystem;
let receiver: Receiver;
let host: string;
beforeAll(async () => {
  system = await startSystem();
  receiver = await startReceiver();
  await system.app.listen({ port: 0, host: '127.0.0.1' });
  host = `http://127.0.0.1:${(system.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await receiver.close();
  await system.close();
});

it("delivers every call made with Segment's own Node library (@segment/analytics-node)", async () => {
  const { source, writeKey } = await sourceWithDestination(system.store, { sharedSecret: 'k', webhooks: [{ url: receiver.url, headers: {} }] });
  const analytics = new Analytics({ writeKey, host, flushAt: 10, maxRetries: 2 });
  const errors: unknown[] = [];
  analytics.on('error', (err) => errors.push(err));

  analytics.identify({ userId: 'seg-user', traits: { plan: 'Premium' }, messageId: 'seg-identify' });
  analytics.track({ userId: 'seg-user', event: 'Order Completed', properties: { total: 42 }, messageId: 'seg-track' });
  analytics.page({ userId: 'seg-user', name: 'Home', properties: { path: '/' }, messageId: 'seg-page' });
  analytics.screen({ userId: 'seg-user', name: 'Cart', messageId: 'seg-screen' });
  analytics.group({ userId: 'seg-user', groupId: 'acme', traits: { name: 'Acme' }, messageId: 'seg-group' });
  analytics.alias({ userId: 'seg-user', previousId: 'anon-1', messageId: 'seg-alias' });
  await analytics.closeAndFlush({ timeout: 20_000 });
  expect(errors).toEqual([]);

  for (const type of ['identify', 'track', 'page', 'screen', 'group', 'alias']) {
    expect(await deliveryResult(system.client, source.id, `seg-${type}`)).toMatchObject({ ok: true });
    const body = JSON.parse((await receiver.waitForMessage(`seg-${type}`)).body);
    expect(body).toMatchObject({ version: 1, type });
  }
  const track = JSON.parse((await receiver.waitForMessage('seg-track')).body);
  expect(track).toMatchObject({ event: 'Order Completed', properties: { total: 42 }, userId: 'seg-user' });
  expect(track.context.library.name).toBe('@segment/analytics-node');
});
