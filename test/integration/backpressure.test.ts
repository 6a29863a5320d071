import { sleep } from '../helpers/faults';
import { waitFor } from '../helpers/processes';
import { startReceiver, type Receiver, type Responder } from '../helpers/receiver';
import { ADMIN_TOKEN, deliveryResult, send, sourceWithDestination, startSystem, type TestSystem, useSystem } from '../helpers/system';

/**
 * Backpressure, what a receiver may ask for: a 429 or 503 with Retry-After pauses its URL for every
 * message (not only the one that got it); `webhook-delivery: disable` switches the URL off like
 * 410; `webhook-delivery: abort-message` gives up that one message.
 */

let system: TestSystem;
const receivers: Receiver[] = [];
useSystem((s) => (system = s), { alsoClose: receivers });

async function receiver(responder?: Responder): Promise<Receiver> {
  const r = await startReceiver(responder);
  receivers.push(r);
  return r;
}

const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
const track = (writeKey: string, messageId: string) => send(system.app, writeKey, 'track', { userId: 'u', event: 'Backpressure', messageId });

it('pauses a URL that answered 429 with Retry-After: 5 for every message, for 5 s; other URLs and destinations flow meanwhile', async () => {
  const pressed = await receiver((_request, n) => (n === 0 ? { status: 429, headers: { 'retry-after': '5' } } : { status: 200 }));
  const [other, otherDestination] = [await receiver(), await receiver()];
  const { source, writeKey, destination } = await sourceWithDestination(system.store, { webhooks: [{ url: pressed.url, headers: {} }] });
  const second = await sourceWithDestination(system.store, { webhooks: [{ url: other.url, headers: {} }] });
  await system.store.destinations.create(source.id, { enabled: true, webhooks: [{ url: otherDestination.url, headers: {} }] });

  await track(writeKey, 'pressed-0');
  const [asked] = await pressed.waitForRequests(1);
  // The worker records the pause once it has read the answer: the admin view shows it from then on.
  const view = await waitFor(async () => {
    const shown = (await system.app.inject({ method: 'GET', url: `/admin/destinations/${destination.id}`, headers: auth })).json();
    if (!shown.webhooks[0].backpressure) throw new Error('no backpressure shown yet');
    return shown;
  }, 4_000);
  expect(view.webhooks[0].backpressure).toEqual({ until: expect.any(String), reason: 'HTTP 429 with Retry-After' });
  expect(Date.parse(view.webhooks[0].backpressure.until)).toBeGreaterThanOrEqual(asked.at + 5_000);
  const ids = ['pressed-1', 'pressed-2', 'pressed-3'];
  for (const id of ids) {
    await track(writeKey, id);
    await track(second.writeKey, id);
  }
  // The other destination of the same source and another source's URL get every message at once.
  await otherDestination.waitForRequests(4, 4_000);
  await other.waitForRequests(3, 4_000);

  for (const id of ['pressed-0', ...ids]) {
    expect(await deliveryResult(system.client, source.id, id)).toMatchObject({ ok: true });
  }
  expect(pressed.requests).toHaveLength(5);
  // Nothing reached the pressed URL, from any message, within the 5 s it asked for.
  for (const later of pressed.requests.slice(1)) expect(later.at - asked.at).toBeGreaterThanOrEqual(5_000);
  // The waits show in the destination's health: each is recorded by the ask after it and added to the
  // store with the worker's next flush (every 200 ms here), so the three may land in different flushes.
  // Three messages waited out most of the 5 s each.
  const health = await waitFor(async () => {
    const shown = (await system.app.inject({ method: 'GET', url: `/admin/destinations/${destination.id}/health`, headers: auth })).json();
    if (!(shown.flow.lastHour.backpressuredMs > 3 * 2_000)) throw new Error(`not every wait recorded yet: ${JSON.stringify(shown.flow)}`);
    return shown;
  }, 5_000);
  expect(health.flow).toMatchObject({ paused: false, maxRequestsPerSecond: null, lastHour: { throttledMs: 0, heldMs: 0 } });
  expect(health.webhooks[0].lastHour.waited.backpressuredMs).toBe(health.flow.lastHour.backpressuredMs);
}, 60_000);

it('ends a URL\'s hour-long backpressure on DELETE …/backpressure: the held messages and the one that got the 503 arrive within 5 s', async () => {
  // A retry window long enough for the hour the URL asks for (the worker pauses it up to its own window, 4 h).
  const long = await startSystem({ deliveryRetryWindow: 2 * 3_600_000 });
  try {
    const pressed = await receiver((_request, n) => (n === 0 ? { status: 503, headers: { 'retry-after': '3600' } } : { status: 200 }));
    const { source, writeKey, destination } = await sourceWithDestination(long.store, { webhooks: [{ url: pressed.url, headers: {} }] });
    const sendTo = (messageId: string) => send(long.app, writeKey, 'track', { userId: 'u', event: 'Backpressure', messageId });
    await sendTo('hour-0');
    await pressed.waitForRequests(1);
    await waitFor(async () => {
      if (!(await long.store.destinations.get(destination.id))?.webhooks[0].backpressure) throw new Error('no backpressure recorded yet');
    }, 4_000);
    const held = ['hour-1', 'hour-2', 'hour-3'];
    for (const id of held) await sendTo(id);
    // Each asks, is held for the hour, and sleeps: nothing more reaches the URL.
    await sleep(1_500);
    expect(pressed.requests).toHaveLength(1);

    const cleared = await long.app.inject({ method: 'DELETE', url: `/admin/destinations/${destination.id}/webhooks/0/backpressure`, headers: auth });
    expect(cleared.statusCode).toBe(204);
    await pressed.waitForRequests(1 + 1 + held.length, 5_000);
    for (const id of ['hour-0', ...held]) expect(await deliveryResult(long.client, source.id, id)).toMatchObject({ ok: true });
    expect((await long.store.destinations.get(destination.id))?.webhooks[0]).not.toHaveProperty('backpressure');

    // Idempotent (a second click); a webhook that is not there is a 404 that names it.
    expect((await long.app.inject({ method: 'DELETE', url: `/admin/destinations/${destination.id}/webhooks/0/backpressure`, headers: auth })).statusCode).toBe(204);
    const missing = await long.app.inject({ method: 'DELETE', url: `/admin/destinations/${destination.id}/webhooks/3/backpressure`, headers: auth });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().message).toContain(`webhook 3 of destination ${destination.id}`);
  } finally {
    await long.close();
  }
}, 60_000);

it('switches a URL off when it answers webhook-delivery: disable, like 410, and fails over to the next one', async () => {
  const disabling = await receiver(() => ({ status: 503, headers: { 'webhook-delivery': 'disable' } }));
  const healthy = await receiver();
  const { source, writeKey, destination } = await sourceWithDestination(system.store, { webhooks: [{ url: disabling.url, headers: {} }, { url: healthy.url, headers: {} }] });
  await track(writeKey, 'disable-1');
  expect(await deliveryResult(system.client, source.id, 'disable-1')).toMatchObject({ ok: true, report: { destinations: [{ status: 'delivered', webhookIndex: 1, rounds: 1 }] } });
  const view = (await system.app.inject({ method: 'GET', url: `/admin/destinations/${destination.id}`, headers: auth })).json();
  expect(view.webhooks[0].disabled).toEqual({ reason: 'answered HTTP 503 with webhook-delivery: disable to message disable-1', at: expect.any(String) });

  await track(writeKey, 'disable-2');
  expect(await deliveryResult(system.client, source.id, 'disable-2')).toMatchObject({ ok: true, report: { destinations: [{ webhookIndex: 1 }] } });
  expect(disabling.requests).toHaveLength(1);
}, 60_000);

it('stops retrying one message that got webhook-delivery: abort-message, a permanent outcome; the URL stays on', async () => {
  const aborting = await receiver((_request, n) => (n === 0 ? { status: 500, headers: { 'webhook-delivery': 'abort-message' } } : { status: 200 }));
  const { source, writeKey, destination } = await sourceWithDestination(system.store, { webhooks: [{ url: aborting.url, headers: {} }] });
  await track(writeKey, 'abort-1');
  const aborted = await deliveryResult(system.client, source.id, 'abort-1');
  expect(aborted).toMatchObject({ ok: false, report: { destinations: [{ status: 'failed', rounds: 1 }] } });
  expect(aborted.ok || aborted.message).toContain('HTTP 500 with webhook-delivery: abort-message');
  expect(aborting.requests).toHaveLength(1);

  await track(writeKey, 'abort-2');
  expect(await deliveryResult(system.client, source.id, 'abort-2')).toMatchObject({ ok: true });
  expect((await system.store.destinations.get(destination.id))?.webhooks[0].disabled).toBeUndefined();
}, 60_000);

it("ends an actions mapping URL's backpressure on DELETE …/mappings/:name/backpressure: a 503 Retry-After: 14400 pauses it, shown in the destination and health views, and the held message is delivered", async () => {
  const long = await startSystem({ deliveryRetryWindow: 5 * 3_600_000 });
  try {
    const pressed = await receiver((_request, n) => (n === 0 ? { status: 503, headers: { 'retry-after': '14400' } } : { status: 200 }));
    const { source, writeKey } = await long.store.sources.create('mapping backpressure');
    const created = await long.app.inject({
      method: 'POST',
      url: `/admin/sources/${source.id}/destinations`,
      headers: auth,
      payload: { type: 'actions', enabled: true, mappings: [{ name: 'Orders sync', enabled: true, trigger: 'all', settings: { url: `${pressed.url}/orders`, method: 'POST' } }] },
    });
    expect(created.statusCode).toBe(201);
    const id = created.json<{ id: string }>().id;
    const sendTo = (messageId: string) => send(long.app, writeKey, 'track', { userId: 'u', event: 'Backpressure', messageId });
    await sendTo('mapped-0');
    await pressed.waitForRequests(1);
    const view = async () => (await long.app.inject({ method: 'GET', url: `/admin/destinations/${id}`, headers: auth })).json();
    await waitFor(async () => {
      if (!(await view()).mappings[0].backpressure) throw new Error('no backpressure shown yet');
    }, 4_000);
    expect((await view()).mappings[0].backpressure).toEqual({ until: expect.any(String), reason: 'HTTP 503 with Retry-After' });
    const health = (await long.app.inject({ method: 'GET', url: `/admin/destinations/${id}/health`, headers: auth })).json();
    expect(health.mappings).toEqual([expect.objectContaining({ name: 'Orders sync', backpressure: { until: expect.any(String), reason: 'HTTP 503 with Retry-After' } })]);

    await sendTo('mapped-1');
    // It asks, is held for the pause, and sleeps: nothing more reaches the URL.
    await sleep(1_500);
    expect(pressed.requests).toHaveLength(1);

    const cleared = await long.app.inject({ method: 'DELETE', url: `/admin/destinations/${id}/mappings/${encodeURIComponent('Orders sync')}/backpressure`, headers: auth });
    expect(cleared.statusCode).toBe(204);
    await pressed.waitForRequests(3, 5_000);
    for (const messageId of ['mapped-0', 'mapped-1']) expect(await deliveryResult(long.client, source.id, messageId)).toMatchObject({ ok: true });
    expect((await view()).mappings[0]).not.toHaveProperty('backpressure');

    const missing = await long.app.inject({ method: 'DELETE', url: `/admin/destinations/${id}/mappings/Nope/backpressure`, headers: auth });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().message).toContain(`mapping "Nope" of destination ${id}`);
  } finally {
    await long.close();
  }
}, 90_000);
