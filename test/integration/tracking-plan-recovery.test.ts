import { deliveryWorkflowId } from '../../src/delivery/ids';
import { REPLAY_HEADER } from '../../src/delivery/replay';
import { readReplay, replayFinished, startReplay } from '../helpers/replay-api';
import { waitFor } from '../helpers/processes';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { ADMIN_TOKEN, basicAuth, deliveryResult, send, startSystem, workflowHistoryText, type TestSystem } from '../helpers/system';

/**
 * Recovery: after fixing a rule, a blocked-only replay delivers the formerly
 * blocked events once. Real API, real Temporal, the run's worker and store, real receivers. Every
 * source, plan and id is this file's own.
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

const admin = (method: 'GET' | 'POST' | 'PUT' | 'PATCH', url: string, payload?: unknown) =>
  system.app.inject({ method, url, headers: auth, ...(payload !== undefined && { payload: payload as Record<string, unknown> }) });

async function destinationTo(sourceId: string, enabled = true) {
  const hook = await startReceiver();
  receivers.push(hook);
  const reply = await admin('POST', `/admin/sources/${sourceId}/destinations`, { enabled, webhooks: [{ url: hook.url }] });
  expect(reply.statusCode).toBe(201);
  return { hook, id: reply.json<{ id: string }>().id };
}

/** Order Completed needs `order_id` (a string) and a numeric `total`; `required` is what the fix drops. */
const orderCompleted = (required: string[]) => ({
  type: 'TRACK',
  key: 'Order Completed',
  version: 1,
  jsonSchema: {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    labels: {},
    properties: {
      context: {},
      traits: { type: 'object', properties: {} },
      properties: { type: 'object', properties: { order_id: { type: 'string' }, total: { type: 'number' } }, required },
    },
    required: ['properties'],
  },
});

/** A source whose plan blocks an Order Completed that violates its rule. */
async function blockingSource(name: string) {
  const { source, writeKey } = await system.store.sources.create(`tracking plan recovery: ${name}`);
  const created = await admin('POST', '/admin/tracking-plans', { name: `recovery ${name}` });
  const planId = created.json<{ id: string }>().id;
  expect((await admin('PUT', `/admin/tracking-plans/${planId}/rules`, { rules: [orderCompleted(['order_id'])] })).statusCode).toBe(200);
  expect((await admin('POST', `/admin/tracking-plans/${planId}/sources`, { sourceId: source.id })).statusCode).toBe(201);
  expect((await admin('PATCH', `/admin/sources/${source.id}/settings`, { track: { allowEventOnViolations: false } })).statusCode).toBe(200);
  return { source, writeKey, planId };
}

const messageIdsOf = (hook: Receiver) => hook.requests.map((r) => (JSON.parse(r.body) as { messageId: string }).messageId);
const auditOf = async (target: string) =>
  (await admin('GET', '/admin/audit?limit=500')).json<{ entries: Array<{ action: string; target: string }> }>().entries.filter((e) => e.target === target);

it('after the rule is fixed, a blocked-only replay delivers the formerly blocked event once to each enabled destination, with its messageId; a second one sends nothing again', async () => {
  const { source, writeKey, planId } = await blockingSource('fixed rule');
  const first = await destinationTo(source.id);
  const second = await destinationTo(source.id);
  const switchedOff = await destinationTo(source.id, false);
  const since = new Date(Date.now() - 60_000).toISOString();

  // With blocking on: the valid one is delivered, the one missing order_id and the one with a text total are blocked.
  const batch = [
    { type: 'track', userId: 'rc-u1', event: 'Order Completed', messageId: 'rc-valid', properties: { order_id: 'o-1', total: 3 } },
    { type: 'track', userId: 'rc-u1', event: 'Order Completed', messageId: 'rc-missing', properties: { total: 4, coupon_code: 'RC-SECRET-5531' } },
    { type: 'track', userId: 'rc-u1', event: 'Order Completed', messageId: 'rc-still-blocked', properties: { order_id: 'o-3', total: 'five' } },
  ];
  expect((await system.app.inject({ method: 'POST', url: '/v1/batch', headers: { authorization: basicAuth(writeKey) }, payload: { batch } })).statusCode).toBe(200);
  expect(await deliveryResult(system.client, source.id, 'rc-valid')).toMatchObject({ ok: true });
  expect(messageIdsOf(first.hook)).toEqual(['rc-valid']);
  expect(messageIdsOf(second.hook)).toEqual(['rc-valid']);

  // Fix the rule (order_id no longer required): the text total still violates it.
  expect((await admin('PATCH', `/admin/tracking-plans/${planId}/rules`, { rules: [orderCompleted([])] })).statusCode).toBe(200);

  const until = new Date(Date.now() + 1_000).toISOString();
  const id = await startReplay(system, { sourceId: source.id, since, until, blockedOnly: true });
  const done = await replayFinished(system, id);
  expect(done).toMatchObject({
    sourceId: source.id,
    destinationId: null,
    blockedOnly: true,
    status: 'completed',
    matched: 2,
    started: 1,
    delivered: 1,
    failed: 0,
    skipped: { erased: 0, suppressed: 0, filtered: 0, blocked: 1, duplicate: 0 },
  });

  // The recovered event is the message's own delivery: its original messageId, to every enabled destination, the replay named.
  expect(await deliveryResult(system.client, source.id, 'rc-missing')).toMatchObject({ ok: true });
  for (const { hook } of [first, second]) {
    expect(messageIdsOf(hook)).toEqual(['rc-valid', 'rc-missing']);
    const recovered = hook.requests[1];
    expect(recovered.headers[REPLAY_HEADER]).toBe(id);
    expect(JSON.parse(recovered.body)).toMatchObject({ messageId: 'rc-missing', event: 'Order Completed', properties: { total: 4, coupon_code: 'RC-SECRET-5531' } });
  }
  expect(switchedOff.hook.requests).toHaveLength(0);
  // Its memo names the replay that recovered it: what tells a page run again after a crash its own start from another's.
  expect((await system.client.workflow.getHandle(deliveryWorkflowId(source.id, 'rc-missing')).describe()).memo).toEqual({ recoveredBy: id });
  // Nothing of the user entered Temporal unsealed: the history without a codec lacks the property's value.
  expect(await workflowHistoryText(deliveryWorkflowId(source.id, 'rc-missing'))).not.toContain('RC-SECRET-5531');
  // Audited once, as every replay's creation.
  expect((await auditOf(id)).map((e) => e.action)).toEqual(['replay.start']);

  // A second blocked-only replay of the same range: the recovered one has its delivery, the other is still blocked.
  const again = await startReplay(system, { sourceId: source.id, since, until, blockedOnly: true });
  expect(await replayFinished(system, again)).toMatchObject({ status: 'completed', matched: 2, started: 0, delivered: 0, skipped: { blocked: 1, duplicate: 1 } });
  // And the sender's resend of the same messageId, which passes today, finds the same delivery.
  await send(system.app, writeKey, 'track', { userId: 'rc-u1', event: 'Order Completed', messageId: 'rc-missing', properties: { total: 4 } });
  expect(await deliveryResult(system.client, source.id, 'rc-missing')).toMatchObject({ ok: true });
  expect(messageIdsOf(first.hook)).toEqual(['rc-valid', 'rc-missing']);
  expect(messageIdsOf(second.hook)).toEqual(['rc-valid', 'rc-missing']);
}, 180_000);

it('refuses blockedOnly that is not a boolean, blockedOnly with a destinationId, and a replay with neither, each naming the field', async () => {
  const { source } = await blockingSource('refusals');
  const destination = await destinationTo(source.id);
  const range = { since: new Date(Date.now() - 60_000).toISOString(), until: new Date(Date.now() + 1_000).toISOString() };
  const refused = async (payload: Record<string, unknown>) => {
    const reply = await admin('POST', '/admin/replays', { sourceId: source.id, ...range, ...payload });
    expect(reply.statusCode).toBe(400);
    return reply.json<{ message: string }>().message;
  };
  expect(await refused({ blockedOnly: 'yes' })).toBe('blockedOnly: must be boolean');
  expect(await refused({ blockedOnly: true, destinationId: destination.id })).toMatch(/^destinationId: a blocked-only replay goes to every enabled destination of the source and takes no destinationId/);
  expect(await refused({})).toBe('destinationId: is required (only a blocked-only replay goes to every enabled destination of the source)');
  expect(await refused({ blockedOnly: false })).toMatch(/^destinationId: is required/);
  const replays = (await admin('GET', '/admin/replays?limit=1000')).json<{ replays: Array<{ sourceId: string }> }>().replays;
  expect(replays.filter((r) => r.sourceId === source.id)).toEqual([]);
});

it('pauses, resumes and cancels a blocked-only replay as any other, counting what is under way', async () => {
  const { source, writeKey, planId } = await blockingSource('control');
  const { hook } = await destinationTo(source.id);
  // The receiver is down: the recovered delivery stays under way (retrying) until the test lets it through.
  hook.respond(() => ({ status: 503 }));
  const since = new Date(Date.now() - 60_000).toISOString();
  await send(system.app, writeKey, 'track', { userId: 'rc-u2', event: 'Order Completed', messageId: 'rc-held', properties: { total: 1 } });
  expect((await admin('PATCH', `/admin/tracking-plans/${planId}/rules`, { rules: [orderCompleted([])] })).statusCode).toBe(200);

  const id = await startReplay(system, { sourceId: source.id, since, until: new Date(Date.now() + 1_000).toISOString(), blockedOnly: true });
  await hook.waitForMessage('rc-held');
  // The page's counts are written once its activity returns, after the start the receiver saw.
  await waitFor(async () => expect(await readReplay(system, id)).toMatchObject({ status: 'running', matched: 1, started: 1, delivered: 0 }), 20_000);
  const change = async (what: 'pause' | 'resume' | 'cancel') => {
    const reply = await admin('POST', `/admin/replays/${id}/${what}`);
    expect(reply.statusCode).toBe(200);
    return reply.json<{ status: string }>().status;
  };
  expect(await change('pause')).toBe('paused');
  expect(await change('resume')).toBe('running');
  expect(await change('cancel')).toBe('cancelled');
  expect((await auditOf(id)).map((e) => e.action).sort()).toEqual(['replay.cancel', 'replay.pause', 'replay.resume', 'replay.start']);

  // The delivery it started is the message's own and goes on after the replay ended: once the receiver is back, delivered once.
  hook.respond(() => ({ status: 200 }));
  expect(await deliveryResult(system.client, source.id, 'rc-held')).toMatchObject({ ok: true });
  await waitFor(() => expect(hook.requests.filter((r) => !r.hung).at(-1)?.body).toContain('rc-held'), 10_000);
}, 120_000);
