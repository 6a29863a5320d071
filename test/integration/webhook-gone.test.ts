import { startReceiver, type Receiver } from '../helpers/receiver';
import { ADMIN_TOKEN, deliveryResult, send, sourceWithDestination, type TestSystem, useSystem } from '../helpers/system';

let system: TestSystem;
const receivers: Receiver[] = [];
useSystem((s) => (system = s), { alsoClose: receivers });

async function receiver(status: number): Promise<Receiver> {
  const r = await startReceiver(() => ({ status }));
  receivers.push(r);
  return r;
}

const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
const view = async (id: string) => (await system.app.inject({ method: 'GET', url: `/admin/destinations/${id}`, headers: auth })).json();
const patch = (id: string, payload: Record<string, unknown>) => system.app.inject({ method: 'PATCH', url: `/admin/destinations/${id}`, headers: auth, payload });

async function deliver(writeKey: string, sourceId: string, messageId: string) {
  await send(system.app, writeKey, 'track', { userId: 'u', event: 'Gone?', messageId });
  return deliveryResult(system.client, sourceId, messageId);
}

describe('410 Gone (Standard Webhooks: the endpoint is gone for good)', () => {
  it('switches that URL off, records why in the admin view, and sends it nothing more', async () => {
    const [gone, healthy] = [await receiver(410), await receiver(200)];
    const { source, writeKey, destination } = await sourceWithDestination(system.store, {
      webhooks: [
        { url: gone.url, headers: {} },
        { url: healthy.url, headers: {} },
      ],
    });

    expect(await deliver(writeKey, source.id, 'gone-1')).toMatchObject({ ok: true, report: { destinations: [{ status: 'delivered', webhookIndex: 1, rounds: 1 }] } });
    expect(gone.requests).toHaveLength(1);

    const shown = await view(destination.id);
    expect(shown.webhooks[0]).toEqual({
      url: gone.url,
      headerNames: [],
      disabled: { reason: 'answered HTTP 410 Gone to message gone-1', at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) },
    });
    expect(shown.webhooks[1]).toEqual({ url: healthy.url, headerNames: [] });

    // The next message goes straight to the URL that is still on.
    expect(await deliver(writeKey, source.id, 'gone-2')).toMatchObject({ ok: true, report: { destinations: [{ status: 'delivered', webhookIndex: 1, rounds: 1 }] } });
    expect(gone.requests).toHaveLength(1);
    expect(healthy.requests).toHaveLength(2);
  });

  it('ends the delivery without retrying when the only URL answers 410, and stops routing to the destination', async () => {
    const gone = await receiver(410);
    const { source, writeKey, destination } = await sourceWithDestination(system.store, { webhooks: [{ url: gone.url, headers: {} }] });
    const result = await deliver(writeKey, source.id, 'only-gone-1');
    expect(result).toMatchObject({ ok: false, report: { destinations: [{ status: 'failed', rounds: 1 }] } });
    expect(result.ok || result.message).toContain('HTTP 410 Gone');
    expect(await system.store.destinations.listEnabledIds(source.id)).toEqual([]);
    expect((await view(destination.id)).enabled).toBe(true);

    // Accepted (the source is fine), but nothing is sent: the destination has no URL switched on.
    await send(system.app, writeKey, 'track', { userId: 'u', event: 'Gone?', messageId: 'only-gone-2' });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(gone.requests).toHaveLength(1);
  });

  it('keeps the URL off when the list is re-sent, and switches it back on with enabled: true', async () => {
    const flipping = await receiver(410);
    const { source, writeKey, destination } = await sourceWithDestination(system.store, { webhooks: [{ url: flipping.url, headers: {} }] });
    await deliver(writeKey, source.id, 'back-1');
    expect((await view(destination.id)).webhooks[0].disabled).toBeDefined();

    const resent = await patch(destination.id, { webhooks: [{ url: flipping.url, headers: { 'X-New': 'v' } }] });
    expect(resent.statusCode).toBe(200);
    expect(resent.json().webhooks[0]).toMatchObject({ headerNames: ['X-New'], disabled: { reason: expect.stringContaining('410 Gone') } });

    flipping.respond(() => ({ status: 200 }));
    const on = await patch(destination.id, { webhooks: [{ url: flipping.url, headers: { 'X-New': 'v' }, enabled: true }] });
    expect(on.json().webhooks[0]).toEqual({ url: flipping.url, headerNames: ['X-New'] });
    expect(await deliver(writeKey, source.id, 'back-2')).toMatchObject({ ok: true });
    expect(flipping.requests).toHaveLength(2);
  });

  it('lets an operator switch one URL off by hand, with that reason', async () => {
    const [first, second] = [await receiver(200), await receiver(200)];
    const { source, writeKey, destination } = await sourceWithDestination(system.store, {
      webhooks: [
        { url: first.url, headers: {} },
        { url: second.url, headers: {} },
      ],
    });
    const off = await patch(destination.id, { webhooks: [{ url: first.url, enabled: false }, { url: second.url }] });
    expect(off.json().webhooks[0].disabled).toEqual({ reason: 'switched off through the admin API', at: expect.any(String) });
    expect(await deliver(writeKey, source.id, 'manual-off')).toMatchObject({ ok: true, report: { destinations: [{ webhookIndex: 1 }] } });
    expect(first.requests).toHaveLength(0);
  });
});
