import { WorkflowNotFoundError } from '@temporalio/client';
import { Webhook } from 'standardwebhooks';
import { loadConfig } from '../../src/config';
import { incidentId, type OperationalEvent } from '../../src/delivery/operational-events';
import { operationalEventId } from '../../src/activities/operational-events';
import { waitFor } from '../helpers/processes';
import { startReceiver, type ReceivedRequest, type Receiver } from '../helpers/receiver';
import { ADMIN_TOKEN, deliveryResult, send, sourceWithDestination, useSystem, type TestSystem } from '../helpers/system';

/**
 * Operational webhooks, on real processes (the run's worker, its operational lane, real
 * receivers): events in Svix's names, one per incident, signed with Standard Webhooks and checked
 * with the `standardwebhooks` package. Operational endpoints see every destination's events, and
 * other files run beside this one: every assertion reads only the events of this file's destinations.
 */

let system: TestSystem;
const receivers: Receiver[] = [];
const endpointIds: string[] = [];
// Registered before useSystem's, so it runs while the system is still open (Jest runs afterAll hooks in order).
afterAll(async () => {
  for (const id of endpointIds) await system?.store.operationalEndpoints.delete(id);
});
// A short retry window: a receiver that always answers 500 fails about 15 times, then for good; at
// least 4 (the failing event's threshold) on a loaded box with other files running beside this one.
useSystem((s) => (system = s), { alsoClose: receivers, overrides: { deliveryRetryWindow: 12_000, deliveryInitialBackoff: 200, deliveryMaxBackoff: 800 } });

const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
let operational: Receiver;
let slack: Receiver;
let secret: string;

async function receiver(status: number): Promise<Receiver> {
  const r = await startReceiver(() => ({ status }));
  receivers.push(r);
  return r;
}

async function createEndpoint(payload: Record<string, unknown>) {
  const res = await system.app.inject({ method: 'POST', url: '/admin/operational-endpoints', headers: auth, payload });
  expect(res.statusCode).toBe(201);
  endpointIds.push(res.json().id);
  return res.json();
}

beforeAll(async () => {
  operational = await receiver(200);
  slack = await receiver(200);
  const created = await createEndpoint({ url: operational.url, eventTypes: [] });
  secret = created.secret;
  await createEndpoint({ url: slack.url, eventTypes: ['endpoint.disabled'], format: 'slack' });
});


const eventsOf = (destinationId: string): { request: ReceivedRequest; event: OperationalEvent }[] =>
  operational.requests.map((request) => ({ request, event: JSON.parse(request.body) as OperationalEvent })).filter(({ event }) => event.data.destinationId === destinationId);

const ofType = (destinationId: string, type: OperationalEvent['type']) => eventsOf(destinationId).filter(({ event }) => event.type === type);

/** Waits until this destination has an event of this type; returns them all. */
const arrived = (destinationId: string, type: OperationalEvent['type']) =>
  waitFor(() => {
    const found = ofType(destinationId, type);
    if (found.length === 0) throw new Error(`no ${type} for ${destinationId} yet; got ${eventsOf(destinationId).map(({ event }) => event.type).join(', ') || 'nothing'}`);
    return found;
  }, 60_000);

/** The run's worker's OPERATIONAL_EVENT_WINDOW (the same environment as this process's). */
const WINDOW_MS = loadConfig(process.env).operationalEventWindow;

/** The windows a span of time touches: 1, or 2 when it crosses a window's end. */
const windowsBetween = (from: number, to: number) => Math.floor(to / WINDOW_MS) - Math.floor(from / WINDOW_MS) + 1;

/**
 * How many operational workflows the incidents of `type` at this destination's first URL, in the
 * windows between `from` and `to`, started, by id (an incident no raise started does not exist), once the
 * event of each has reached the `operational` receiver (its webhook-id is the incident's); each
 * carries its destination as fairness key.
 */
async function incidentsBetween(destinationId: string, type: OperationalEvent['type'], from: number, to: number): Promise<string[]> {
  const started: string[] = [];
  for (let at = Math.floor(from / WINDOW_MS) * WINDOW_MS; at <= to; at += WINDOW_MS) {
    const id = incidentId({ type, timestamp: new Date(at).toISOString(), data: { sourceId: '', destinationId, webhookIndex: 0 } }, { windowMs: WINDOW_MS });
    let description;
    try {
      description = await system.client.workflow.getHandle(id).describe();
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) continue;
      throw err;
    }
    // Its destination is its fairness key on the operational lane, as for the slow lane's attempts.
    expect(description.priority?.fairnessKey).toBe(destinationId);
    started.push(id);
    await waitFor(() => {
      if (!operational.requests.some((request) => request.headers['webhook-id'] === operationalEventId(id))) throw new Error(`the event of ${id} has not arrived yet`);
    }, 60_000);
  }
  return started;
}

/** Sends these messages to the destination and waits until each delivery has ended. */
async function deliver(writeKey: string, sourceId: string, messageIds: string[]) {
  await Promise.all(messageIds.map((messageId) => send(system.app, writeKey, 'track', { userId: 'u', event: 'Op Lane', messageId })));
  return Promise.all(messageIds.map((messageId) => deliveryResult(system.client, sourceId, messageId)));
}

function verified(request: ReceivedRequest): unknown {
  return new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
}

describe('operational endpoints (admin API)', () => {
  it('shows a generated whsec_ secret once, in the 201, and never again', async () => {
    const created = await createEndpoint({ url: 'https://ops.example.com/hooks', eventTypes: ['message.attempt.exhausted'] });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(created).toMatchObject({ url: 'https://ops.example.com/hooks', eventTypes: ['message.attempt.exhausted'], format: 'standard', enabled: true });
    const one = await system.app.inject({ method: 'GET', url: `/admin/operational-endpoints/${created.id}`, headers: auth });
    const list = await system.app.inject({ method: 'GET', url: '/admin/operational-endpoints', headers: auth });
    const patched = await system.app.inject({ method: 'PATCH', url: `/admin/operational-endpoints/${created.id}`, headers: auth, payload: { secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}`, enabled: false } });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({ enabled: false });
    for (const body of [one.body, list.body, patched.body]) {
      expect(body).not.toContain(created.secret);
      expect(body).not.toContain('whsec_');
    }
    // A secret given is not echoed.
    const given = await createEndpoint({ url: 'https://ops.example.com/given', eventTypes: [], secret: `whsec_${Buffer.alloc(32, 9).toString('base64')}` });
    expect(given.secret).toBeUndefined();
    // Unreachable: gone before any event is raised, so no operational workflow of this file retries it for hours.
    await system.store.operationalEndpoints.delete(given.id);
  });

  it.each([
    ['url', { url: 'ftp://ops.example.com', eventTypes: [] }],
    ['url', { url: 'https://user:pw@ops.example.com', eventTypes: [] }],
    ['secret', { url: 'https://ops.example.com', eventTypes: [], secret: 'not-a-whsec' }],
    ['eventTypes', { url: 'https://ops.example.com', eventTypes: ['message.attempt.sneezed'] }],
    ['format', { url: 'https://ops.example.com', eventTypes: [], format: 'teams' }],
  ])('refuses a bad %s with a 400 naming it', async (field, payload) => {
    const res = await system.app.inject({ method: 'POST', url: '/admin/operational-endpoints', headers: auth, payload });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toContain(field);
  });

  it('audits each change once, with field names and never the secret', async () => {
    const created = await createEndpoint({ url: 'https://ops.example.com/audited', eventTypes: [], secret: `whsec_${Buffer.alloc(32, 3).toString('base64')}` });
    await system.app.inject({ method: 'DELETE', url: `/admin/operational-endpoints/${created.id}`, headers: auth });
    const rows = await system.store.audit.list({ target: created.id, limit: 10 });
    expect(rows.map((row) => row.action).sort()).toEqual(['operational_endpoint.create', 'operational_endpoint.delete']);
    expect(rows.find((row) => row.action === 'operational_endpoint.create')?.changed).toEqual(['eventTypes', 'secret', 'url']);
    expect(JSON.stringify(rows)).not.toContain('whsec_');
  });
});

describe('operational events', () => {
  it('a message that fails for good sends one message.attempt.failing (at its 4th failure) and one message.attempt.exhausted, signed, with no payload', async () => {
    const failing = await receiver(500);
    const { source, writeKey, destination } = await sourceWithDestination(system.store, { webhooks: [{ url: failing.url, headers: {} }] });
    await send(system.app, writeKey, 'track', { userId: 'op-user-secret', event: 'Op Failing', messageId: 'op-fail-1', properties: { card: 'payload-never-in-alerts' } });
    expect(await deliveryResult(system.client, source.id, 'op-fail-1')).toMatchObject({ ok: false });
    expect(failing.requests.length).toBeGreaterThanOrEqual(4);

    const [exhausted] = await arrived(destination.id, 'message.attempt.exhausted');
    const failingEvents = ofType(destination.id, 'message.attempt.failing');
    expect(failingEvents).toHaveLength(1);
    expect(ofType(destination.id, 'message.attempt.exhausted')).toHaveLength(1);
    for (const { request } of [exhausted, ...failingEvents]) {
      expect(verified(request)).toBeTruthy();
      expect(request.body).not.toContain('payload-never-in-alerts');
      expect(request.body).not.toContain('op-user-secret');
    }
    expect(exhausted.event).toEqual({
      type: 'message.attempt.exhausted',
      timestamp: expect.any(String),
      // Names beside the ids, so the on-call person needs no look-up.
      data: { sourceId: source.id, sourceName: source.name, destinationId: destination.id, destinationName: destination.name, messageId: 'op-fail-1', webhookIndex: 0, lastAttempt: { responseStatusCode: expect.any(Number), error: expect.any(String), timestamp: expect.any(String) } },
    });
    // The last attempt is the receiver's 500, or, on a loaded box, one the retry window's end cut
    // off before it answered (status 0, "attempt lost"): either is what the delivery ended on.
    const { lastAttempt } = exhausted.event.data;
    expect([lastAttempt?.responseStatusCode === 500 && lastAttempt.error?.includes('500'), lastAttempt?.responseStatusCode === 0 && lastAttempt.error?.includes('attempt lost')]).toContain(true);
    expect(failingEvents[0].event.data).toMatchObject({ messageId: 'op-fail-1', webhookIndex: 0, lastAttempt: { responseStatusCode: 500 } });
    // The delivery's detail, read from its history, lists the attempts alone: raising the events is not one.
    const detail = await system.app.inject({ method: 'GET', url: `/admin/sources/${source.id}/deliveries/op-fail-1`, headers: auth });
    // (A last attempt the window's end cut off is listed, though it may never have reached the receiver.)
    const listed = detail.json<{ destinations: { attempts: unknown[] }[] }>().destinations[0].attempts.length;
    expect(listed).toBeGreaterThanOrEqual(failing.requests.length);
    expect(listed).toBeLessThanOrEqual(failing.requests.length + 1);
    // The webhook-id is stable per incident, different between the two.
    expect(exhausted.request.headers['webhook-id']).not.toBe(failingEvents[0].request.headers['webhook-id']);
  });

  it('a message that succeeds after failing sends message.attempt.recovered after its failing, and nothing about exhaustion', async () => {
    const flaky = await startReceiver((_request, n) => ({ status: n < 4 ? 503 : 200 }));
    receivers.push(flaky);
    const { source, writeKey, destination } = await sourceWithDestination(system.store, { webhooks: [{ url: flaky.url, headers: {} }] });
    await send(system.app, writeKey, 'track', { userId: 'u', event: 'Op Flaky', messageId: 'op-flaky-1' });
    expect(await deliveryResult(system.client, source.id, 'op-flaky-1')).toMatchObject({ ok: true });
    const [recovered] = await arrived(destination.id, 'message.attempt.recovered');
    expect(verified(recovered.request)).toBeTruthy();
    expect(recovered.event.data).toMatchObject({ messageId: 'op-flaky-1', webhookIndex: 0 });
    expect(ofType(destination.id, 'message.attempt.failing')).toHaveLength(1);
    expect(ofType(destination.id, 'message.attempt.exhausted')).toHaveLength(0);
  });

  it('a message that fails for good in fewer than 4 attempts sends exhausted and no failing', async () => {
    const refusing = await receiver(400);
    const { source, writeKey, destination } = await sourceWithDestination(system.store, { webhooks: [{ url: refusing.url, headers: {} }] });
    await send(system.app, writeKey, 'track', { userId: 'u', event: 'Op Refused', messageId: 'op-refused-1' });
    expect(await deliveryResult(system.client, source.id, 'op-refused-1')).toMatchObject({ ok: false });
    const [exhausted] = await arrived(destination.id, 'message.attempt.exhausted');
    expect(exhausted.event.data.lastAttempt?.responseStatusCode).toBe(400);
    expect(ofType(destination.id, 'message.attempt.failing')).toHaveLength(0);

    // A bulk redelivery job of it ends: background_task.finished, once.
    const job = await system.app.inject({
      method: 'POST',
      url: `/admin/sources/${source.id}/redeliver`,
      headers: auth,
      payload: { status: 'failed', since: new Date(Date.now() - 600_000).toISOString(), until: new Date(Date.now() + 1_000).toISOString(), destinationId: destination.id },
    });
    expect(job.statusCode).toBe(202);
    const [finished] = await arrived(destination.id, 'background_task.finished');
    expect(verified(finished.request)).toBeTruthy();
    expect(finished.event.data).toEqual({ sourceId: source.id, sourceName: source.name, destinationId: destination.id, destinationName: destination.name, task: { kind: 'redelivery', id: job.json<{ id: string }>().id, status: 'completed' } });
    expect(ofType(destination.id, 'background_task.finished')).toHaveLength(1);
  });

  it('a 410 sends one endpoint.disabled however many messages met it, Slack gets {text}, and switching it back on sends endpoint.enabled', async () => {
    const gone = await receiver(410);
    const healthy = await receiver(200);
    const { source, writeKey, destination } = await sourceWithDestination(system.store, {
      webhooks: [
        { url: gone.url, headers: {} },
        { url: healthy.url, headers: {} },
      ],
    });
    const ids = ['op-gone-1', 'op-gone-2', 'op-gone-3'];
    await Promise.all(ids.map((messageId) => send(system.app, writeKey, 'track', { userId: 'u', event: 'Op Gone', messageId })));
    for (const messageId of ids) expect(await deliveryResult(system.client, source.id, messageId)).toMatchObject({ ok: true });

    const [disabled] = await arrived(destination.id, 'endpoint.disabled');
    expect(verified(disabled.request)).toBeTruthy();
    expect(disabled.event.data).toMatchObject({ sourceId: source.id, destinationId: destination.id, webhookIndex: 0, lastAttempt: { responseStatusCode: 410 } });
    const toSlack = await waitFor(() => {
      const found = slack.requests.map((r) => JSON.parse(r.body) as { text: string }).filter((body) => body.text.includes(destination.id));
      if (found.length === 0) throw new Error('nothing in Slack yet');
      return found;
    }, 60_000);
    expect(Object.keys(toSlack[0])).toEqual(['text']);
    expect(toSlack[0].text).toContain('endpoint.disabled');
    expect(toSlack[0].text).toContain(`destination ${destination.name} (${destination.id})`);

    const enabled = await system.app.inject({ method: 'POST', url: `/admin/destinations/${destination.id}/webhooks/0/enable`, headers: auth });
    expect(enabled.json()).toMatchObject({ wasDisabled: true });
    const [back] = await arrived(destination.id, 'endpoint.enabled');
    expect(verified(back.request)).toBeTruthy();
    expect(back.event.data).toMatchObject({ destinationId: destination.id, webhookIndex: 0 });
    // One incident, one event each: however many attempts met the 410. (Slack took only disabled.)
    expect(ofType(destination.id, 'endpoint.disabled')).toHaveLength(1);
    expect(ofType(destination.id, 'endpoint.enabled')).toHaveLength(1);
    expect(slack.requests.filter((r) => r.body.includes(destination.id))).toHaveLength(1);
  });
  it('messages failing at one destination within a window raise one failing and one recovered for the lane, not one per message', async () => {
    // Each message fails 4 times (failing at the 4th), then is accepted (recovered).
    const tries = new Map<string, number>();
    const flaky = await startReceiver((request) => {
      const { messageId } = JSON.parse(request.body) as { messageId: string };
      tries.set(messageId, (tries.get(messageId) ?? 0) + 1);
      return { status: tries.get(messageId)! <= 4 ? 500 : 200 };
    });
    receivers.push(flaky);
    const { source, writeKey, destination } = await sourceWithDestination(system.store, { webhooks: [{ url: flaky.url, headers: {} }] });
    const messageIds = ['op-lane-1', 'op-lane-2', 'op-lane-3'];
    const from = Date.now();
    for (const result of await deliver(writeKey, source.id, messageIds)) expect(result).toMatchObject({ ok: true });
    const to = Date.now();

    // One incident of each type per window: one, or two if the messages crossed a window's end; never three.
    for (const type of ['message.attempt.failing', 'message.attempt.recovered'] as const) {
      const started = (await incidentsBetween(destination.id, type, from, to)).length;
      expect(started).toBeGreaterThanOrEqual(1);
      expect(started).toBeLessThanOrEqual(windowsBetween(from, to));
      const events = ofType(destination.id, type);
      expect(events).toHaveLength(started);
      // The event names the lane, and the first message of the window to reach the state.
      expect(messageIds).toContain(events[0].event.data.messageId);
      expect(events[0].event.data).toMatchObject({ sourceId: source.id, destinationId: destination.id, webhookIndex: 0 });
    }
    expect(ofType(destination.id, 'message.attempt.exhausted')).toHaveLength(0);
  });

  it('messages refused (4xx) at one destination within a window raise one exhausted for the lane, not one per message', async () => {
    const refusing = await receiver(400);
    const { source, writeKey, destination } = await sourceWithDestination(system.store, { webhooks: [{ url: refusing.url, headers: {} }] });
    const from = Date.now();
    for (const result of await deliver(writeKey, source.id, ['op-refused-lane-1', 'op-refused-lane-2', 'op-refused-lane-3'])) expect(result).toMatchObject({ ok: false });
    const to = Date.now();
    const started = (await incidentsBetween(destination.id, 'message.attempt.exhausted', from, to)).length;
    expect(started).toBeGreaterThanOrEqual(1);
    expect(started).toBeLessThanOrEqual(windowsBetween(from, to));
    expect(ofType(destination.id, 'message.attempt.exhausted')).toHaveLength(started);
    expect(ofType(destination.id, 'message.attempt.failing')).toHaveLength(0);
  });

  it('an endpoint made after events were raised gets the next ones, and one switched off gets none, though the worker keeps the endpoints in memory', async () => {
    const refusing = await receiver(400);
    const late = await receiver(200);
    const { id } = await createEndpoint({ url: late.url, eventTypes: ['message.attempt.exhausted'] });
    /** A new destination refusing one message: its exhausted event, sent to every endpoint subscribed when it was raised. */
    const refusedAt = async (messageId: string) => {
      const { source, writeKey, destination } = await sourceWithDestination(system.store, { webhooks: [{ url: refusing.url, headers: {} }] });
      const from = Date.now();
      expect((await deliver(writeKey, source.id, [messageId]))[0]).toMatchObject({ ok: false });
      const [incident, ...more] = await incidentsBetween(destination.id, 'message.attempt.exhausted', from, Date.now());
      expect(more).toHaveLength(0);
      expect(ofType(destination.id, 'message.attempt.exhausted')).toHaveLength(1);
      return { destinationId: destination.id, incident };
    };
    const toLate = (destinationId: string) => late.requests.filter((request) => (JSON.parse(request.body) as OperationalEvent).data.destinationId === destinationId);
    // The worker's copy of the endpoints is read again within a second of a change by another
    // process (SQLite): the first event raised after that reaches the new endpoint.
    let attempt = 0;
    await waitFor(async () => {
      const { destinationId } = await refusedAt(`op-late-${++attempt}`);
      if (toLate(destinationId).length === 0) throw new Error(`the new endpoint has not had an event yet (${attempt} tried)`);
    }, 120_000);

    const off = await system.app.inject({ method: 'PATCH', url: `/admin/operational-endpoints/${id}`, headers: auth, payload: { enabled: false } });
    expect(off.statusCode).toBe(200);
    // At once, whatever the copy still says: each send reads its endpoint again.
    const after = await refusedAt('op-late-off');
    // Its workflow ended: every endpoint it was raised to was sent to, or skipped.
    await system.client.workflow.getHandle(after.incident).result();
    expect(toLate(after.destinationId)).toHaveLength(0);
    // Each try is a whole delivery retried until exhausted: beside other files on 2 cores a few of them
    // outlasted the default 60 s once.
  }, 180_000);
});
