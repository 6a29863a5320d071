import { deliveryWorkflowId } from '../../src/delivery/ids';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { ADMIN_TOKEN, deliveryResult, send, sourceWithDestination, startSystem, type TestSystem } from '../helpers/system';

/**
 * Delivery rules that used to break (docs/reliability.md): header values that are no HTTP field value, and a
 * failed delivery sent again. On the run's worker; docs/reliability.md lists what each test covers.
 */

let system: TestSystem;
/** Short window, so a delivery to a broken receiver fails within seconds. */
let shortWindow: TestSystem;
/** A webhook may take 10 s to answer: an attempt held open by the receiver keeps its delivery running. */
let slowAnswers: TestSystem;
const receivers: Receiver[] = [];

beforeAll(async () => {
  system = await startSystem();
  shortWindow = await startSystem({ deliveryRetryWindow: 1_500, deliveryInitialBackoff: 200, deliveryMaxBackoff: 400 });
  slowAnswers = await startSystem({ deliveryRetryWindow: 15_000, deliveryTimeout: 10_000 });
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await system.close();
  await shortWindow.close();
  await slowAnswers.close();
});

async function receiver(status: number): Promise<Receiver> {
  const r = await startReceiver(() => ({ status }));
  receivers.push(r);
  return r;
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 1_000));

/** Attempts run as regular activities (a first local attempt to a webhook not seen yet defers without sending). */
const activityAttemptsIn = async (s: TestSystem, workflowId: string) => {
  const { events } = await s.client.workflow.getHandle(workflowId).fetchHistory();
  // Attempts only: a delivery that gives up also raises its operational event, an activity too.
  return (events ?? []).filter((e) => e.activityTaskScheduledEventAttributes && e.activityTaskScheduledEventAttributes.activityType?.name !== 'raiseOperationalEvent').length;
};

describe('header values that are no HTTP field value', () => {
  it('refuses tök€n at configuration with a 400 naming the header, without echoing the value', async () => {
    const { source } = await system.store.sources.create('header value rule');
    const reply = await system.app.inject({
      method: 'POST',
      url: `/admin/sources/${source.id}/destinations`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { enabled: true, webhooks: [{ url: 'https://example.com/a' }, { url: 'https://example.com/b', headers: { 'X-Token': 'tök€n' } }] },
    });
    expect(reply.statusCode).toBe(400);
    expect(reply.json().message).toBe('webhooks[1].headers.X-Token: must be a valid HTTP field value: visible ASCII, spaces, tabs or Latin-1 characters (RFC 9110)');
    expect(reply.body).not.toContain('tök');
    expect(await system.store.destinations.listEnabledIds(source.id)).toEqual([]);
  });

  it('ends a destination stored earlier with such a header as permanent after one attempt, sending nothing', async () => {
    const hook = await receiver(200);
    // Written through the store, as a destination configured before the rule existed.
    const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: hook.url, headers: { 'X-Token': 'tök€n' } }] });
    await send(system.app, writeKey, 'track', { userId: 'u', event: 'Bad header', messageId: 'bad-header-1' });
    const result = await deliveryResult(system.client, source.id, 'bad-header-1');
    expect(result).toMatchObject({ ok: false, report: { destinations: [{ status: 'failed', rounds: 1 }] } });
    expect(result.ok || result.message).toContain('every webhook failed permanently: webhook 0: request could not be built (UND_ERR_INVALID_ARG: invalid x-token header); no request was sent');
    expect(result.ok || result.message).not.toContain('tök');
    expect(await activityAttemptsIn(system, deliveryWorkflowId(source.id, 'bad-header-1'))).toBe(1);
    expect(hook.requests).toHaveLength(0);
  });
});

describe('a message sent again with the same messageId', () => {
  it('is delivered again when its earlier delivery failed, once the receiver works', async () => {
    const hook = await receiver(500);
    const { source, writeKey } = await sourceWithDestination(shortWindow.store, { webhooks: [{ url: hook.url, headers: {} }] });
    const body = { userId: 'u', event: 'Resent', messageId: 'resent-after-failure' };
    await send(shortWindow.app, writeKey, 'track', body);
    expect(await deliveryResult(shortWindow.client, source.id, body.messageId)).toMatchObject({ ok: false, message: expect.stringContaining('retry window exhausted') });
    const failedAttempts = hook.requests.length;
    expect(failedAttempts).toBeGreaterThan(0);

    hook.respond(() => ({ status: 200 }));
    await send(shortWindow.app, writeKey, 'track', body);
    expect(await deliveryResult(shortWindow.client, source.id, body.messageId)).toMatchObject({ ok: true, report: { destinations: [{ status: 'delivered', rounds: 1 }] } });
    expect(hook.requests).toHaveLength(failedAttempts + 1);
  });

  it('is not delivered twice once delivered', async () => {
    const hook = await receiver(200);
    const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: hook.url, headers: {} }] });
    const body = { userId: 'u', event: 'Resent', messageId: 'resent-after-delivery' };
    await send(system.app, writeKey, 'track', body);
    expect(await deliveryResult(system.client, source.id, body.messageId)).toMatchObject({ ok: true });
    const { runId } = await system.client.workflow.getHandle(deliveryWorkflowId(source.id, body.messageId)).describe();

    await send(system.app, writeKey, 'track', body);
    expect((await system.client.workflow.getHandle(deliveryWorkflowId(source.id, body.messageId)).describe()).runId).toBe(runId);
    await settle();
    expect(hook.requests).toHaveLength(1);
  });

  it('is not duplicated while its delivery is still running', async () => {
    // 503 twice, then accepted: the re-send arrives while the first delivery is between rounds.
    const hook = await receiver(503);
    hook.respond((_req, n) => ({ status: n < 2 ? 503 : 200 }));
    const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: hook.url, headers: {} }] });
    const body = { userId: 'u', event: 'Resent', messageId: 'resent-while-running' };
    await send(system.app, writeKey, 'track', body);
    await hook.waitForRequests(1);
    const handle = system.client.workflow.getHandle(deliveryWorkflowId(source.id, body.messageId));
    const running = await handle.describe();
    expect(running.status.name).toBe('RUNNING');

    await send(system.app, writeKey, 'track', body);
    expect(await deliveryResult(system.client, source.id, body.messageId)).toMatchObject({ ok: true, report: { destinations: [{ status: 'delivered', rounds: 3 }] } });
    expect((await handle.describe()).runId).toBe(running.runId);
    await settle();
    expect(hook.requests).toHaveLength(3);
  });

  // Documented in docs/api.md ("Idempotent"): a re-send is deduplicated for as
  // long as the message's delivery run is open, even once one destination has given up its every
  // URL; only a re-send after the run closed failed is delivered again.
  it('is deduplicated while its delivery is still open, even for a destination that gave up, and delivered again once it failed', async () => {
    const gaveUp = await receiver(400);
    // Holds the first attempt open for 5 s, then refuses it for good: the run closes failed then.
    const slow = await receiver(400);
    slow.respond((_req, n) => (n === 0 ? { status: 400, delayMs: 5_000 } : { status: 200 }));
    const { source, writeKey } = await sourceWithDestination(slowAnswers.store, { webhooks: [{ url: gaveUp.url, headers: {} }] });
    await slowAnswers.store.destinations.create(source.id, { enabled: true, webhooks: [{ url: slow.url, headers: {} }] });
    const body = { userId: 'u', event: 'Resent', messageId: 'resent-while-closing' };
    await send(slowAnswers.app, writeKey, 'track', body);
    await Promise.all([gaveUp.waitForRequests(1), slow.waitForRequests(1)]);
    const handle = slowAnswers.client.workflow.getHandle(deliveryWorkflowId(source.id, body.messageId));
    const running = await handle.describe();
    expect(running.status.name).toBe('RUNNING');

    gaveUp.respond(() => ({ status: 200 }));
    await send(slowAnswers.app, writeKey, 'track', body);
    const result = await deliveryResult(slowAnswers.client, source.id, body.messageId);
    expect(result).toMatchObject({ ok: false, message: expect.stringContaining('every webhook failed permanently') });
    expect((await handle.describe()).runId).toBe(running.runId);
    expect(gaveUp.requests).toHaveLength(1);

    await send(slowAnswers.app, writeKey, 'track', body);
    expect(await deliveryResult(slowAnswers.client, source.id, body.messageId)).toMatchObject({ ok: true });
    expect(gaveUp.requests).toHaveLength(2);
  });
});

describe('a call sent without messageId', () => {
  it('is delivered once when its sender re-sends it with a new sentAt', async () => {
    const hook = await receiver(200);
    const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: hook.url, headers: {} }] });
    // As Segment's libraries retry: the call unchanged, sentAt re-stamped 30 s later by the client's clock.
    const timestamp = new Date(Date.now() - 60_000).toISOString();
    const call = { userId: 'u', event: 'Retried', timestamp };
    await send(system.app, writeKey, 'track', { ...call, sentAt: new Date(Date.parse(timestamp) + 1_000).toISOString() });
    const [first] = await hook.waitForRequests(1);
    const { messageId } = JSON.parse(first.body) as { messageId: string };
    const { runId } = await system.client.workflow.getHandle(deliveryWorkflowId(source.id, messageId)).describe();

    await send(system.app, writeKey, 'track', { ...call, sentAt: new Date(Date.parse(timestamp) + 31_000).toISOString() });
    expect(await deliveryResult(system.client, source.id, messageId)).toMatchObject({ ok: true });
    expect((await system.client.workflow.getHandle(deliveryWorkflowId(source.id, messageId)).describe()).runId).toBe(runId);
    await settle();
    expect(hook.requests).toHaveLength(1);
  });
});
