import { deliveryWorkflowId } from '../../src/delivery/ids';
import type { ConsentSettings } from '../../src/rules/consent';
import { createDefinition, expectMessages, messagesOf, NEVER, syncNow } from '../helpers/personas';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { ADMIN_TOKEN, basicAuth, decodedWorkflowHistoryText, deliveryResult, hasDeliveryWorkflow, send, startSystem, type TestSystem } from '../helpers/system';

/**
 * What each destination receives, decided at ingest per (message, destination) before
 * any workflow starts. Real API, real Temporal, the run's worker, real receivers.
 */

let system: TestSystem;
const receivers: Receiver[] = [];
const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };

beforeAll(async () => {
  system = await startSystem();
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await system.close();
});

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  receivers.push(r);
  return r;
}

/** A source whose destinations need these consent settings, each with a receiver of its own. */
async function sourceWith(consents: ConsentSettings[]) {
  const { source, writeKey } = await system.store.sources.create(`data control ${expect.getState().currentTestName ?? ''}`.slice(0, 200));
  const destinations = [];
  for (const consent of consents) {
    const hook = await receiver();
    const reply = await system.app.inject({ method: 'POST', url: `/admin/sources/${source.id}/destinations`, headers: auth, payload: { enabled: true, webhooks: [{ url: hook.url }], consent } });
    expect(reply.statusCode).toBe(201);
    destinations.push({ id: reply.json().id as string, hook });
  }
  return { source, writeKey, destinations };
}

/** Whether Temporal has a delivery workflow for the message at all. */
const hasWorkflow = (sourceId: string, messageId: string) => hasDeliveryWorkflow(system.client, sourceId, messageId);

const receivedIds = (hook: Receiver) => hook.requests.map((r) => (JSON.parse(r.body) as { messageId: string }).messageId).sort();

async function overview(destinationId: string) {
  const reply = await system.app.inject({ method: 'GET', url: `/admin/destinations/${destinationId}/overview`, headers: auth });
  expect(reply.statusCode).toBe(200);
  return reply.json();
}

/**
 * The overview as it stands once the counts of requests already answered are all flushed: a flush
 * (every HEALTH_FLUSH_INTERVAL, 200 ms here) may fall between a request's `received` and its stops,
 * so `received` alone can be ahead; one read two intervals after it is whole.
 */
async function settledOverview(destinationId: string, received: number) {
  await eventually(
    () => overview(destinationId),
    (v) => v.received === received,
  );
  await new Promise((resolve) => setTimeout(resolve, 500));
  return overview(destinationId);
}

/** The overview's counts are flushed every HEALTH_FLUSH_INTERVAL: waits until `check` holds. */
async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (check(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('consent per destination, as Segment decides it', () => {
  const advertising: ConsentSettings = { categories: ['advertising'], whenAbsent: 'deliver' };
  const none: ConsentSettings = { categories: [], whenAbsent: 'deliver' };
  const analyticsFailClosed: ConsentSettings = { categories: ['analytics'], whenAbsent: 'drop' };
  const both: ConsentSettings = { categories: ['advertising', 'analytics'], whenAbsent: 'deliver' };

  // preferences (undefined: no consent object) → which of [advertising, none, analytics fail-closed, both] get it
  const table: Array<[string, Record<string, unknown> | undefined, boolean[]]> = [
    ['ads-granted', { advertising: true }, [true, true, false, false]],
    ['ads-refused', { advertising: false }, [false, true, false, false]],
    ['empty-object', {}, [false, true, false, false]],
    ['absent', undefined, [true, true, false, true]],
    ['all-granted', { advertising: true, analytics: true }, [true, true, true, true]],
    ['non-boolean-true', { advertising: 'true' }, [false, true, false, false]],
  ];

  it('delivers each message only to the destinations whose every category it grants; without preferences, as whenAbsent says', async () => {
    const { source, writeKey, destinations } = await sourceWith([advertising, none, analyticsFailClosed, both]);
    for (const [messageId, preferences] of table) {
      const context = preferences === undefined ? {} : { consent: { categoryPreferences: preferences } };
      await send(system.app, writeKey, 'track', { userId: 'consenting', event: 'Viewed', messageId, context });
    }
    for (const [messageId] of table) expect(await deliveryResult(system.client, source.id, messageId)).toMatchObject({ ok: true });
    destinations.forEach(({ hook }, d) => {
      const expected = table
        .filter(([, , gets]) => gets[d])
        .map(([messageId]) => messageId)
        .sort();
      expect({ destination: d, got: receivedIds(hook) }).toEqual({ destination: d, got: expected });
    });

    // The overview counts each stop under consent, once per message and destination.
    const [ads, , failClosed] = destinations;
    const adsView = await eventually(
      () => overview(ads.id),
      (v) => v.received === table.length && v.filtered.consent === 3,
    );
    expect(adsView).toMatchObject({ received: table.length, filtered: { consent: 3, integrations: 0, suppressed: 0, filters: 0, sampled: 0 }, delivered: 3, failed: 0 });
    expect(
      (
        await eventually(
          () => overview(failClosed.id),
          (v) => v.filtered.consent === 5,
        )
      ).filtered.consent,
    ).toBe(5);
    const metrics = await system.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toContain(`switchyard_messages_filtered_total{destination="${ads.id}",reason="consent"} 3`);
  });

  it('decides consent before the integrations object: no integrations key brings back a refused category', async () => {
    const { source, writeKey, destinations } = await sourceWith([advertising, none]);
    const refused = { consent: { categoryPreferences: { advertising: false } } };
    await send(system.app, writeKey, 'track', { userId: 'u', event: 'E', messageId: 'consent-over-integrations', context: refused, integrations: { All: true, Webhooks: true } });
    await send(system.app, writeKey, 'track', { userId: 'u', event: 'E', messageId: 'integrations-off', integrations: { Webhooks: false } });
    expect(await deliveryResult(system.client, source.id, 'consent-over-integrations')).toMatchObject({ ok: true });
    expect(receivedIds(destinations[0].hook)).toEqual([]);
    expect(receivedIds(destinations[1].hook)).toEqual(['consent-over-integrations']);
    expect(await hasWorkflow(source.id, 'integrations-off')).toBe(false);
    const view = await eventually(
      () => overview(destinations[0].id),
      (v) => v.filtered.consent === 1 && v.filtered.integrations === 1,
    );
    expect(view.filtered).toMatchObject({ consent: 1, integrations: 1 });
  });

  it('starts no workflow for a message no destination gets, and still answers 200', async () => {
    const { source, writeKey, destinations } = await sourceWith([advertising, analyticsFailClosed]);
    const reply = await send(system.app, writeKey, 'track', { userId: 'u', event: 'E', messageId: 'nobody-gets-it', context: { consent: { categoryPreferences: {} } } });
    expect(reply.json()).toEqual({ success: true });
    expect(await hasWorkflow(source.id, 'nobody-gets-it')).toBe(false);
    for (const { hook } of destinations) expect(hook.requests).toHaveLength(0);
  });

  it('delivers "Segment Consent Preference Updated" to a destination whose category it revokes; any other event with that denial still stops', async () => {
    const { source, writeKey, destinations } = await sourceWith([advertising]);
    const revoked = { consent: { categoryPreferences: { advertising: false } } };
    await send(system.app, writeKey, 'track', { userId: 'u', event: 'Segment Consent Preference Updated', messageId: 'revocation', context: revoked });
    await send(system.app, writeKey, 'track', { userId: 'u', event: 'Order Completed', messageId: 'after-revocation', context: revoked });
    expect(await deliveryResult(system.client, source.id, 'revocation')).toMatchObject({ ok: true });
    expect(receivedIds(destinations[0].hook)).toEqual(['revocation']);
    expect(await hasWorkflow(source.id, 'after-revocation')).toBe(false);
    const view = await eventually(
      () => overview(destinations[0].id),
      (v) => v.filtered.consent === 1,
    );
    expect(view.filtered.consent).toBe(1);
  });

  it('refuses a Segment Consent Preference Updated track without categoryPreferences with a 400 naming the field', async () => {
    const { writeKey } = await sourceWith([none]);
    const reply = await system.app.inject({
      method: 'POST',
      url: '/v1/track',
      headers: { authorization: `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}` },
      payload: { userId: 'u', event: 'Segment Consent Preference Updated', messageId: 'pref-without-prefs', context: { consent: {} } },
    });
    expect(reply.statusCode).toBe(400);
    expect(reply.json().message).toContain('context.consent.categoryPreferences');
  });
});

describe("each destination's overview shows its own outcome", () => {
  it('with one healthy, one failing and one retrying destination, each overview shows its own outcome, and received = delivered + filtered + retrying + failed', async () => {
    const none: ConsentSettings = { categories: [], whenAbsent: 'deliver' };
    const { source, writeKey, destinations } = await sourceWith([none, none, none]);
    const [healthy, failing, retrying] = destinations;
    failing.hook.respond(() => ({ status: 400 }));
    retrying.hook.respond(() => ({ status: 500 }));
    const messageIds = ['own-1', 'own-2', 'own-3'];
    for (const messageId of messageIds) await send(system.app, writeKey, 'track', { userId: 'u', event: 'E', messageId });
    await eventually(
      async () => failing.hook.requests.length,
      (n) => n >= messageIds.length,
    );
    const expected = [
      [healthy, { received: 3, delivered: 3, retrying: 0, failed: 0 }],
      [failing, { received: 3, delivered: 0, retrying: 0, failed: 3 }],
      [retrying, { received: 3, delivered: 0, retrying: 3, failed: 0 }],
    ] as const;
    for (const [destination, counts] of expected) {
      const view = await eventually(
        () => overview(destination.id),
        (v) => v.received === counts.received && v.delivered === counts.delivered && v.failed === counts.failed && v.retrying === counts.retrying,
      );
      expect({ destination: destination.id, ...view }).toMatchObject({ destination: destination.id, ...counts, replayed: { delivered: 0, retrying: 0, failed: 0, stopped: 0 } });
      const filtered = Object.values(view.filtered as Record<string, number>).reduce((sum, n) => sum + n, 0);
      expect(view.received).toBe(view.delivered + filtered + view.retrying + view.failed);
    }
    expect(receivedIds(healthy.hook)).toEqual(messageIds);
    expect(source.id).toBeDefined();
  });
});

describe('suppression at ingest', () => {
  it('answers 200, delivers nothing and counts the stop under suppressed for every destination', async () => {
    const { source, writeKey, destinations } = await sourceWith([{ categories: [], whenAbsent: 'deliver' }]);
    const regulation = await system.app.inject({ method: 'POST', url: '/admin/regulations', headers: auth, payload: { regulationType: 'SUPPRESS_ONLY', subjectType: 'USER_ID', subjectIds: ['suppressed-at-ingest'] } });
    expect(regulation.statusCode).toBeLessThan(300);
    await send(system.app, writeKey, 'track', { userId: 'suppressed-at-ingest', event: 'E', messageId: 'suppressed-1' });
    expect(await hasWorkflow(source.id, 'suppressed-1')).toBe(false);
    const view = await eventually(
      () => overview(destinations[0].id),
      (v) => v.filtered.suppressed === 1,
    );
    expect(view).toMatchObject({ received: 1, filtered: { suppressed: 1 } });
    expect(destinations[0].hook.requests).toHaveLength(0);
  });
});

/** Saves a filter on a destination through the admin API and returns its id. */
async function addFilter(destinationId: string, filter: Record<string, unknown>): Promise<string> {
  const reply = await system.app.inject({ method: 'POST', url: `/admin/destinations/${destinationId}/filters`, headers: auth, payload: filter });
  expect(reply.statusCode).toBe(201);
  return reply.json().id as string;
}

describe('destination filters at ingest', () => {
  const open: ConsentSettings = { categories: [], whenAbsent: 'deliver' };

  it("drops a property for one destination only, and the dropped value never reaches that delivery's history", async () => {
    const { source, writeKey, destinations } = await sourceWith([open, open]);
    const [filtered, whole] = destinations;
    await addFilter(filtered.id, { title: 'No emails', enabled: true, if: 'all', actions: [{ type: 'DROP_PROPERTIES', fields: { properties: ['email'] } }] });
    const email = 'dropped-before-temporal@example.com';
    await send(system.app, writeKey, 'track', { userId: 'u', event: 'Signed Up', messageId: 'drop-email', properties: { plan: 'pro', email } });
    expect(await deliveryResult(system.client, source.id, 'drop-email')).toMatchObject({ ok: true });
    expect(JSON.parse(filtered.hook.requests[0].body).properties).toEqual({ plan: 'pro' });
    expect(JSON.parse(whole.hook.requests[0].body).properties).toEqual({ plan: 'pro', email });

    // With the filtering destination alone, nothing of the value is in the decoded history at all.
    const alone = await sourceWith([open]);
    await addFilter(alone.destinations[0].id, { title: 'No emails', enabled: true, if: "event = 'Signed Up'", actions: [{ type: 'DROP_PROPERTIES', fields: { properties: ['email'] } }] });
    await send(system.app, alone.writeKey, 'track', { userId: 'u', event: 'Signed Up', messageId: 'drop-email-alone', properties: { plan: 'pro', email } });
    expect(await deliveryResult(system.client, alone.source.id, 'drop-email-alone')).toMatchObject({ ok: true });
    const history = await decodedWorkflowHistoryText(system, deliveryWorkflowId(alone.source.id, 'drop-email-alone'));
    expect(history).toContain('drop-email-alone');
    expect(history).not.toContain(email);
  });

  it('drops what an FQL condition matches, starting no workflow, and counts it under the filter', async () => {
    const { source, writeKey, destinations } = await sourceWith([open]);
    const filterId = await addFilter(destinations[0].id, { title: 'Only send orders', enabled: true, if: "!(event = 'Order Completed')", actions: [{ type: 'DROP' }] });
    await send(system.app, writeKey, 'track', { userId: 'u', event: 'Page Scrolled', messageId: 'not-an-order' });
    await send(system.app, writeKey, 'track', { userId: 'u', event: 'Order Completed', messageId: 'an-order' });
    expect(await deliveryResult(system.client, source.id, 'an-order')).toMatchObject({ ok: true });
    expect(await hasWorkflow(source.id, 'not-an-order')).toBe(false);
    expect(receivedIds(destinations[0].hook)).toEqual(['an-order']);
    const view = await settledOverview(destinations[0].id, 2);
    expect(view).toMatchObject({ received: 2, filtered: { filters: 1 }, byFilter: [{ id: filterId, title: 'Only send orders', dropped: 1 }] });
  });

  it('samples half of 200 messages, and decides a re-sent message the same way', async () => {
    const { writeKey, destinations } = await sourceWith([open]);
    await addFilter(destinations[0].id, { title: 'Half', enabled: true, if: 'all', actions: [{ type: 'SAMPLE', percent: 0.5 }] });
    // The sampling decision's spread is a unit test's subject; here it is taken at ingest, on real
    // calls, and the same for a message sent again. 200 messages: 100 expected, 7 the deviation.
    const ids = Array.from({ length: 200 }, (_, i) => `sampled-${i}`);
    const sendAll = async () => {
      for (let i = 0; i < ids.length; i += 100) {
        const batch = ids.slice(i, i + 100).map((messageId) => ({ type: 'track', userId: 'u', event: 'Sampled', messageId }));
        // As a sender does: a 503 (Temporal slow to take a start on a loaded box) is sent again.
        let reply = await system.app.inject({ method: 'POST', url: '/v1/batch', headers: { authorization: basicAuth(writeKey) }, payload: { batch } });
        for (let retry = 0; reply.statusCode === 503 && retry < 5; retry++) {
          await new Promise((resolve) => setTimeout(resolve, 1_000));
          reply = await system.app.inject({ method: 'POST', url: '/v1/batch', headers: { authorization: basicAuth(writeKey) }, payload: { batch } });
        }
        expect(reply.statusCode).toBe(200);
      }
    };
    await sendAll();
    const first = await settledOverview(destinations[0].id, 200);
    expect(first.filtered.sampled).toBeGreaterThanOrEqual(70);
    expect(first.filtered.sampled).toBeLessThanOrEqual(130);
    // The same messages again: exactly the same ones are sampled out, so the count doubles.
    await sendAll();
    const second = await settledOverview(destinations[0].id, 400);
    expect(second.filtered.sampled).toBe(2 * first.filtered.sampled);
  });
});

describe("transformations at ingest, in Segment's order", () => {
  const open: ConsentSettings = { categories: [], whenAbsent: 'deliver' };
  const addTransformation = async (body: Record<string, unknown>) => {
    const reply = await system.app.inject({ method: 'POST', url: '/admin/transformations', headers: auth, payload: body });
    expect(reply.statusCode).toBe(201);
    return reply.json().id as string;
  };

  it('fixes the message for the filters at source scope, transforms what the filters left at destination scope, drops before Temporal, and the overview counts both', async () => {
    const { source, writeKey, destinations } = await sourceWith([open, open]);
    const [filtered, plain] = destinations;
    const fix = await addTransformation({
      sourceId: source.id,
      name: 'Fix order event',
      enabled: true,
      if: "event = 'order_completed'",
      newEventName: 'Order Completed',
      propertyRenames: [{ oldName: 'order_id', newName: 'orderId' }],
    });
    const drop = await addTransformation({ sourceId: source.id, name: 'No pings', enabled: true, if: "event = 'Debug Ping'", drop: true });
    // Scoped to Webhooks (classic): both destinations, after their filters.
    const currency = await addTransformation({
      sourceId: source.id,
      destinationMetadataId: '54521fdc25e721e32a72ef04',
      name: 'Currency',
      enabled: true,
      if: "event = 'Order Completed'",
      propertyValueTransformations: [{ propertyPaths: ['properties.currency'], propertyValue: 'USD' }],
    });
    // Matches only the fixed name, keeps only the renamed property: it sees the source's fix, and the currency comes after it.
    await addFilter(filtered.id, { title: 'Order id only', enabled: true, if: "event = 'Order Completed'", actions: [{ type: 'ALLOW_PROPERTIES', fields: { properties: ['orderId'] } }] });

    await send(system.app, writeKey, 'track', { userId: 'u', event: 'order_completed', messageId: 'transformed-order', properties: { order_id: 'o-1', total: 3 } });
    await send(system.app, writeKey, 'track', { userId: 'u', event: 'Debug Ping', messageId: 'dropped-ping' });
    expect(await deliveryResult(system.client, source.id, 'transformed-order')).toMatchObject({ ok: true });
    expect(await hasWorkflow(source.id, 'dropped-ping')).toBe(false);
    expect(JSON.parse(filtered.hook.requests[0].body)).toMatchObject({ event: 'Order Completed', properties: { orderId: 'o-1', currency: 'USD' } });
    expect(JSON.parse(filtered.hook.requests[0].body).properties).toEqual({ orderId: 'o-1', currency: 'USD' });
    expect(JSON.parse(plain.hook.requests[0].body).properties).toEqual({ orderId: 'o-1', total: 3, currency: 'USD' });
    expect(receivedIds(plain.hook)).toEqual(['transformed-order']);

    const view = await settledOverview(filtered.id, 2);
    expect(view).toMatchObject({ received: 2, delivered: 1, filtered: { transformation: 1, filters: 0 } });
    expect(view.transformations.changed).toBe(2);
    expect(view.transformations.dropped).toBe(1);
    expect(view.transformations.byTransformation.sort((a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name))).toEqual([
      { id: currency, name: 'Currency', changed: 1, dropped: 0 },
      { id: fix, name: 'Fix order event', changed: 1, dropped: 0 },
      { id: drop, name: 'No pings', changed: 0, dropped: 1 },
    ]);
  });
});

describe('Personas syncs respect consent', () => {
  const advertising: ConsentSettings = { categories: ['advertising'], whenAbsent: 'deliver' };
  const analyticsFailClosed: ConsentSettings = { categories: ['analytics'], whenAbsent: 'drop' };
  const open: ConsentSettings = { categories: [], whenAbsent: 'deliver' };
  const anHourAgo = Date.now() - 60 * 60_000;
  const at = (minutes: number) => new Date(anHourAgo + minutes * 60_000).toISOString();
  const consent = (categoryPreferences: Record<string, boolean>) => ({ consent: { categoryPreferences } });

  it("sends an audience's identify only where the profile's newest preferences grant the categories; delete notifications go everywhere", async () => {
    const { source, writeKey, destinations } = await sourceWith([advertising, analyticsFailClosed, open]);
    const [ads, analytics, everyone] = destinations;
    const batch = [
      { type: 'identify', userId: 'p-granted', traits: { plan: 'Premium' }, timestamp: at(0), context: consent({ advertising: true, analytics: true }) },
      { type: 'identify', userId: 'p-refused', traits: { plan: 'Premium' }, timestamp: at(0), context: consent({ advertising: false, analytics: true }) },
      { type: 'identify', userId: 'p-unknown', traits: { plan: 'Premium' }, timestamp: at(0) },
      // Refused first, granted by a newer page call; an older event arriving last changes nothing.
      { type: 'identify', userId: 'p-changed', traits: { plan: 'Premium' }, timestamp: at(1), context: consent({ advertising: false }) },
      { type: 'page', userId: 'p-changed', name: 'Settings', timestamp: at(2), context: consent({ advertising: true, analytics: true }) },
      { type: 'track', userId: 'p-changed', event: 'Old', timestamp: at(-30), context: consent({}) },
    ];
    const reply = await system.app.inject({ method: 'POST', url: '/v1/batch', headers: { authorization: basicAuth(writeKey) }, payload: { batch } });
    expect(reply.statusCode).toBe(200);
    expect((await system.store.personas.profiles.get(source.id, 'p-changed'))?.consent).toEqual({ categoryPreferences: { advertising: true, analytics: true }, timestamp: at(2) });

    const audience = await createDefinition(system.app, source.id, 'audiences', { name: 'Premium Consented', definition: { trait: 'plan', op: 'eq', value: 'Premium' }, schedule: NEVER, paused: true });
    expect(await syncNow(system.app, system.client, 'audiences', audience.id)).toMatchObject({ status: 'committed', changes: 4, started: 4 });
    const usersAt = async (hook: Receiver, count: number) => (await expectMessages(hook, audience.id, count)).map((m) => m.body.userId).sort();
    expect(await usersAt(everyone.hook, 4)).toEqual(['p-changed', 'p-granted', 'p-refused', 'p-unknown']);
    expect(await usersAt(ads.hook, 3)).toEqual(['p-changed', 'p-granted', 'p-unknown']);
    expect(await usersAt(analytics.hook, 3)).toEqual(['p-changed', 'p-granted', 'p-refused']);
    // The preferences the decision read ride along, as on every other event.
    const granted = messagesOf(ads.hook, audience.id).find((m) => m.body.userId === 'p-granted')!;
    expect(granted.body.context).toMatchObject({ consent: { categoryPreferences: { advertising: true, analytics: true } } });

    // A DELETE regulation's notifications are never filtered: the refusing and the unknown user's reach every destination.
    const regulation = await system.app.inject({ method: 'POST', url: '/admin/regulations', headers: auth, payload: { regulationType: 'DELETE_ONLY', subjectType: 'USER_ID', subjectIds: ['p-refused', 'p-unknown'] } });
    expect(regulation.statusCode).toBe(201);
    const deletesAt = (hook: Receiver) =>
      hook.requests
        .map((r) => JSON.parse(r.body) as { type: string; userId: string })
        .filter((m) => m.type === 'delete')
        .map((m) => m.userId)
        .sort();
    for (const { hook } of destinations) {
      expect(await eventually(async () => deletesAt(hook), (users) => users.length === 2, 20_000)).toEqual(['p-refused', 'p-unknown']);
    }
  });

  it("sends nothing about a profile that withdrew the destination's category, and its current state once the category is granted again", async () => {
    const { source, writeKey, destinations } = await sourceWith([advertising, open]);
    const [ads, everyone] = destinations;
    const identify = (userId: string, plan: string, minutes: number, preferences: Record<string, boolean>) => ({ type: 'identify', userId, traits: { plan }, timestamp: at(minutes), context: consent(preferences) });
    const ingest = async (batch: Record<string, unknown>[]) => expect((await system.app.inject({ method: 'POST', url: '/v1/batch', headers: { authorization: basicAuth(writeKey) }, payload: { batch } })).statusCode).toBe(200);
    // g-late never granted advertising yet; g-left granted it, is told it joined, withdraws, then leaves.
    await ingest([identify('g-late', 'Premium', 0, { advertising: false }), identify('g-left', 'Premium', 0, { advertising: true })]);
    const audience = await createDefinition(system.app, source.id, 'audiences', { name: 'Premium Regranted', definition: { trait: 'plan', op: 'eq', value: 'Premium' }, schedule: NEVER, paused: true });
    const seen = (hook: Receiver) => messagesOf(hook, audience.id).map((m) => [m.body.userId, m.body.traits[audience.key]]);
    expect(await syncNow(system.app, system.client, 'audiences', audience.id)).toMatchObject({ status: 'committed', changes: 2 });
    await expectMessages(everyone.hook, audience.id, 2);
    await expectMessages(ads.hook, audience.id, 1);
    expect(seen(ads.hook)).toEqual([['g-left', true]]);

    // g-left withdraws, then leaves the audience: the advertising destination hears nothing of it.
    await ingest([{ type: 'track', userId: 'g-left', event: 'Segment Consent Preference Updated', timestamp: at(1), context: consent({ advertising: false }) }, identify('g-left', 'Basic', 2, { advertising: false })]);
    expect(await syncNow(system.app, system.client, 'audiences', audience.id)).toMatchObject({ status: 'committed', changes: 1 });
    await expectMessages(everyone.hook, audience.id, 3);
    expect(seen(ads.hook)).toEqual([['g-left', true]]);

    // Both grant advertising: the next sync sends each one's current state, though no membership changed.
    await ingest([
      { type: 'track', userId: 'g-late', event: 'Segment Consent Preference Updated', timestamp: at(3), context: consent({ advertising: true }) },
      { type: 'track', userId: 'g-left', event: 'Segment Consent Preference Updated', timestamp: at(3), context: consent({ advertising: true }) },
    ]);
    expect(await syncNow(system.app, system.client, 'audiences', audience.id)).toMatchObject({ status: 'committed', changes: 2 });
    await expectMessages(ads.hook, audience.id, 3);
    expect(seen(ads.hook).slice(1).sort()).toEqual([
      ['g-late', true],
      ['g-left', false],
    ]);
    // A sync with nothing changed since sends nothing again.
    expect(await syncNow(system.app, system.client, 'audiences', audience.id)).toMatchObject({ status: 'committed', changes: 0 });
  });
});

describe("redelivery re-applies today's rules", () => {
  const open: ConsentSettings = { categories: [], whenAbsent: 'deliver' };
  const redeliver = (sourceId: string, messageId: string) => system.app.inject({ method: 'POST', url: `/admin/sources/${sourceId}/deliveries/${messageId}/redeliver`, headers: auth });
  const patchConsent = async (destinationId: string, consent: ConsentSettings) => {
    const reply = await system.app.inject({ method: 'PATCH', url: `/admin/destinations/${destinationId}`, headers: auth, payload: { consent } });
    expect(reply.statusCode).toBe(200);
  };
  const lastBody = (hook: Receiver) => JSON.parse(hook.requests.at(-1)!.body) as { properties: Record<string, unknown> };

  it("sends each destination the body it got, through today's filters, consent and suppression, and nothing to a destination added since", async () => {
    const { source, writeKey, destinations } = await sourceWith([open, open]);
    const [a, b] = destinations;
    await addFilter(b.id, { title: 'No emails', enabled: true, if: 'all', actions: [{ type: 'DROP_PROPERTIES', fields: { properties: ['email'] } }] });
    const email = 'redelivered@example.com';
    await send(system.app, writeKey, 'track', { userId: 'r-user', event: 'Signed Up', messageId: 'redelivered', properties: { plan: 'pro', email }, context: { consent: { categoryPreferences: { advertising: true } } } });
    expect(await deliveryResult(system.client, source.id, 'redelivered')).toMatchObject({ ok: true });
    expect(lastBody(a.hook).properties).toEqual({ plan: 'pro', email });
    expect(lastBody(b.hook).properties).toEqual({ plan: 'pro' });

    // Since then: a filter on A, consent B's user granted, and a new destination C.
    await addFilter(a.id, { title: 'No plans', enabled: true, if: 'all', actions: [{ type: 'DROP_PROPERTIES', fields: { properties: ['plan'] } }] });
    await patchConsent(b.id, { categories: ['advertising'], whenAbsent: 'drop' });
    const late = await receiver();
    const added = await system.app.inject({ method: 'POST', url: `/admin/sources/${source.id}/destinations`, headers: auth, payload: { enabled: true, webhooks: [{ url: late.url }] } });
    expect(added.statusCode).toBe(201);

    expect((await redeliver(source.id, 'redelivered')).statusCode).toBe(202);
    expect(await deliveryResult(system.client, source.id, 'redelivered')).toMatchObject({ ok: true });
    expect(a.hook.requests).toHaveLength(2);
    expect(lastBody(a.hook).properties).toEqual({ email });
    // B's body as it was sent to B: the email its filter dropped never comes back.
    expect(b.hook.requests).toHaveLength(2);
    expect(lastBody(b.hook).properties).toEqual({ plan: 'pro' });
    expect(late.requests).toHaveLength(0);

    // B now needs a category the user did not grant: only A gets it again.
    await patchConsent(b.id, { categories: ['analytics'], whenAbsent: 'deliver' });
    expect((await redeliver(source.id, 'redelivered')).statusCode).toBe(202);
    expect(await deliveryResult(system.client, source.id, 'redelivered')).toMatchObject({ ok: true });
    expect([a.hook.requests.length, b.hook.requests.length, late.requests.length]).toEqual([3, 2, 0]);

    // The user suppressed since: no destination gets it, and the API says why.
    const suppress = await system.app.inject({ method: 'POST', url: '/admin/regulations', headers: auth, payload: { regulationType: 'SUPPRESS_ONLY', subjectType: 'USER_ID', subjectIds: ['r-user'] } });
    expect(suppress.statusCode).toBe(201);
    const refused = await redeliver(source.id, 'redelivered');
    expect(refused.statusCode).toBe(409);
    expect(refused.json().message).toContain("today's consent, suppression or destination filters deliver message redelivered to none of the destinations it went to");
    expect([a.hook.requests.length, b.hook.requests.length, late.requests.length]).toEqual([3, 2, 0]);
  });
});
