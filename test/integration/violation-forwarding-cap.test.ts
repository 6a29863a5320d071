import { violationMessageId } from '../../src/plans/forwarding';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { ADMIN_TOKEN, basicAuth, deliveryResult, forwardingJobDone, hasDeliveryWorkflow, startSystem, type TestSystem } from '../helpers/system';

/**
 * VIOLATION_EVENTS_PER_MINUTE caps the `Violation Generated` events forwarded per (source, rule,
 * violation type) a minute, and counts the suppressed ones. Real API (its cap set to 2),
 * real Temporal, the run's worker, real receivers; every source and id is this file's own.
 */

const CAP = 2;
let system: TestSystem;
const receivers: Receiver[] = [];
const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };

beforeAll(async () => {
  system = await startSystem({ violationEventsPerMinute: CAP });
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await system.close();
});

const admin = (method: 'POST' | 'PUT' | 'PATCH', url: string, payload: unknown) => system.app.inject({ method, url, headers: auth, payload: payload as Record<string, unknown> });

const hasWorkflow = (sourceId: string, messageId: string) => hasDeliveryWorkflow(system.client, sourceId, messageId);

it(`forwards ${CAP} Violation Generated events of 5 violations of one field in a minute, and counts the other 3 suppressed`, async () => {
  const { source: shop, writeKey } = await system.store.sources.create('violation cap: shop');
  const { source: violations } = await system.store.sources.create('violation cap: violations');
  const hook = await startReceiver();
  receivers.push(hook);
  expect((await admin('POST', `/admin/sources/${violations.id}/destinations`, { enabled: true, webhooks: [{ url: hook.url }] })).statusCode).toBe(201);
  const planId = (await admin('POST', '/admin/tracking-plans', { name: 'violation cap' })).json<{ id: string }>().id;
  const rule = {
    type: 'TRACK',
    key: 'Order Completed',
    version: 1,
    jsonSchema: { type: 'object', properties: { properties: { type: 'object', properties: { order_id: { type: 'string' }, total: { type: 'number' } }, required: ['order_id'] } } },
  };
  expect((await admin('PUT', `/admin/tracking-plans/${planId}/rules`, { rules: [rule] })).statusCode).toBe(200);
  expect((await admin('POST', `/admin/tracking-plans/${planId}/sources`, { sourceId: shop.id })).statusCode).toBe(201);
  expect((await admin('PATCH', `/admin/sources/${shop.id}/settings`, { forwardingViolationsTo: violations.id })).statusCode).toBe(200);

  // Five events, each with one violation of the same field, in one request: one minute for all.
  const messageIds = Array.from({ length: 5 }, (_, i) => `cap-${i}`);
  const batch = messageIds.map((messageId, i) => ({ type: 'track', userId: 'cap-u', event: 'Order Completed', messageId, properties: { total: i } }));
  expect((await system.app.inject({ method: 'POST', url: '/v1/batch', headers: { authorization: basicAuth(writeKey) }, payload: { batch } })).statusCode).toBe(200);

  // Forwarding is one durable job, held before the request is answered: once it is done the first two have their delivery, the other three none.
  const generated = messageIds.map((messageId) => violationMessageId(messageId, { field: 'properties.order_id', violationType: 'Required' }));
  await forwardingJobDone(system.client, violations.id, generated.slice(0, CAP));
  expect(await Promise.all(generated.map((id) => hasWorkflow(violations.id, id)))).toEqual([true, true, false, false, false]);
  for (const id of generated.slice(0, CAP)) expect(await deliveryResult(system.client, violations.id, id)).toMatchObject({ ok: true });
  const received = hook.requests.map((r) => JSON.parse(r.body) as { event: string; properties: { eventMessageID: string; violationField: string } });
  // The two deliveries run side by side: in either order.
  expect(received.map((b) => [b.event, b.properties.eventMessageID, b.properties.violationField]).sort()).toEqual([
    ['Violation Generated', 'cap-0', 'properties.order_id'],
    ['Violation Generated', 'cap-1', 'properties.order_id'],
  ]);

  const metrics = (await system.app.inject({ method: 'GET', url: '/metrics' })).body;
  expect(metrics).toContain(`switchyard_tracking_plan_violations_suppressed_total{source="${shop.id}"} 3`);
  // Every violation is still counted as seen: the cap limits the forwarded events only.
  expect(metrics).toContain(`switchyard_tracking_plan_violations_total{source="${shop.id}",event_type="track",violation_type="Required"} 5`);
});
