import { InterceptingCall, status as grpcStatus, type Interceptor } from '@grpc/grpc-js';
import { violationMessageId } from '../../src/plans/forwarding';
import { MAX_VIOLATIONS_PER_MESSAGE, MORE_VIOLATIONS_FIELD } from '../../src/plans/violation-bounds';
import { waitFor } from '../helpers/processes';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { ADMIN_TOKEN, basicAuth, deliveryResult, forwardingJobDone, hasDeliveryWorkflow, startSystem, type TestSystem } from '../helpers/system';

/**
 * Violation forwarding is bounded, from the public write key: a message's violations are grouped per
 * field (array indexes as `[]`) and at most a fixed number per message, each `Violation Generated`
 * carries Segment's properties and quotes bounded names, one oversized `Violation Generated` is
 * left out alone, never its forwarded batch, and a forwarding target that fails never answers the
 * origin's sender 503. Real API, real Temporal, the run's worker and store, real receivers; every
 * source, plan and id is this file's own.
 */

/** The source whose delivery starts the API's client is refused (PERMISSION_DENIED, not retried); undefined: none. */
let refusedTarget: string | undefined;
/** Refuses this API's starts of the refused source's deliveries on the wire: that source fails to ingest from here, as a broken target would. */
const refuseTargetStarts: Interceptor = (options, nextCall) => {
  if (!options.method_definition.path.endsWith('/StartWorkflowExecution')) return new InterceptingCall(nextCall(options));
  const call: InterceptingCall = new InterceptingCall(nextCall(options), {
    sendMessage(message, next) {
      if (refusedTarget && Buffer.from(message as Uint8Array).includes(`message:${refusedTarget}:`)) call.cancelWithStatus(grpcStatus.PERMISSION_DENIED, 'refused by the test: a failing forwarding target');
      else next(message);
    },
  });
  return call;
};

let system: TestSystem;
const receivers: Receiver[] = [];
const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };

beforeAll(async () => {
  // Violations flushed every 200 ms: the violations route catches up fast.
  system = await startSystem({ healthFlushInterval: 200 }, [refuseTargetStarts]);
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await system.close();
});

const admin = (method: 'GET' | 'POST' | 'PUT' | 'PATCH', url: string, payload?: unknown) =>
  system.app.inject({ method, url, headers: auth, ...(payload !== undefined && { payload: payload as Record<string, unknown> }) });

type Body = { event: string; messageId: string; properties: Record<string, unknown>; context: Record<string, unknown> };
const bodies = (hook: Receiver) => hook.requests.map((r) => JSON.parse(r.body) as Body);

/** A source planned with `rule` (report only, Segment's default), forwarding its violations into a source whose destination posts to a receiver. */
async function forwardingSource(name: string, rules: unknown[]) {
  const { source: shop, writeKey } = await system.store.sources.create(`violation bounds: ${name}`);
  const { source: violations } = await system.store.sources.create(`violation bounds: ${name} violations`);
  const hook = await startReceiver();
  receivers.push(hook);
  expect((await admin('POST', `/admin/sources/${violations.id}/destinations`, { enabled: true, webhooks: [{ url: hook.url }] })).statusCode).toBe(201);
  const planId = (await admin('POST', '/admin/tracking-plans', { name: `violation bounds: ${name}` })).json<{ id: string }>().id;
  expect((await admin('PUT', `/admin/tracking-plans/${planId}/rules`, { rules })).statusCode).toBe(200);
  expect((await admin('POST', `/admin/tracking-plans/${planId}/sources`, { sourceId: shop.id })).statusCode).toBe(201);
  expect((await admin('PATCH', `/admin/sources/${shop.id}/settings`, { forwardingViolationsTo: violations.id })).statusCode).toBe(200);
  return { shop, writeKey, violations, hook };
}

const itemsRule = {
  type: 'TRACK',
  key: 'Order Completed',
  version: 1,
  jsonSchema: { type: 'object', properties: { properties: { type: 'object', properties: { items: { type: 'array', items: { type: 'string' } } } } } },
};

const metric = async (line: string) => {
  const text = (await system.app.inject({ method: 'GET', url: '/metrics' })).body;
  return Number(text.split('\n').find((l) => l.startsWith(`${line} `))?.split(' ')[1] ?? 0);
};

it('a 12 KB event of 6,000 wrong items is one violation of properties.items[], stored and forwarded once', async () => {
  const { shop, writeKey, violations, hook } = await forwardingSource('items', [itemsRule]);
  const event = { type: 'track', userId: 'vb-u', event: 'Order Completed', messageId: 'vb-items', properties: { items: Array.from({ length: 6_000 }, () => 0) } };
  expect((await system.app.inject({ method: 'POST', url: '/v1/track', headers: { authorization: basicAuth(writeKey) }, payload: event })).statusCode).toBe(200);

  const generated = violationMessageId('vb-items', { field: 'properties.items[]', violationType: 'Datatype' });
  await forwardingJobDone(system.client, violations.id, [generated]);
  expect(await deliveryResult(system.client, violations.id, generated)).toMatchObject({ ok: true });
  // Not one forwarded call per item: the first item's own id has no workflow.
  expect(await hasDeliveryWorkflow(system.client, violations.id, violationMessageId('vb-items', { field: 'properties.items.0', violationType: 'Datatype' }))).toBe(false);
  expect(bodies(hook).map((b) => [b.event, b.properties.violationField, b.properties.violationDescription])).toEqual([['Violation Generated', 'properties.items[]', 'properties.items[] must be a string']]);
  expect(await metric(`switchyard_tracking_plan_violations_total{source="${shop.id}",event_type="track",violation_type="Datatype"}`)).toBe(1);

  const listed = await waitFor(async () => {
    const found = (await admin('GET', `/admin/sources/${shop.id}/violations?limit=5`)).json<{ violations: Array<Record<string, unknown>> }>().violations;
    expect(found).toHaveLength(1);
    return found;
  }, 10_000);
  expect(listed[0]).toMatchObject({ field: 'properties.items[]', violationType: 'Datatype', count: 1, lastMessageId: 'vb-items' });
  // The route's LIMIT is the API: out of its range is a 400 naming the field.
  const tooMany = await admin('GET', `/admin/sources/${shop.id}/violations?limit=1001`);
  expect(tooMany.statusCode).toBe(400);
  expect(tooMany.json<{ message: string }>().message).toMatch(/limit/);
});

it(`an event with 3,000 unplanned names forwards at most ${MAX_VIOLATIONS_PER_MESSAGE} Violation Generated, the last counting the rest`, async () => {
  const { shop, writeKey, violations, hook } = await forwardingSource('names', [{ ...itemsRule, key: 'Signed Up' }]);
  const properties = Object.fromEntries(Array.from({ length: 3_000 }, (_, i) => [`n${i}`, 1]));
  const event = { type: 'track', userId: 'vb-u', event: 'Signed Up', messageId: 'vb-names', properties };
  expect((await system.app.inject({ method: 'POST', url: '/v1/track', headers: { authorization: basicAuth(writeKey) }, payload: event })).statusCode).toBe(200);

  expect(await metric(`switchyard_tracking_plan_violations_total{source="${shop.id}",event_type="track",violation_type="Unplanned-Property"}`)).toBe(MAX_VIOLATIONS_PER_MESSAGE - 1);
  // The cap (VIOLATION_EVENTS_PER_MINUTE, 10 by default) per (source, rule, violation type) then lets 10 of those through, and the summary.
  const summary = violationMessageId('vb-names', { field: MORE_VIOLATIONS_FIELD, violationType: 'Other' });
  const forwarded = [...Array.from({ length: 10 }, (_, i) => violationMessageId('vb-names', { field: `properties.n${i}`, violationType: 'Unplanned-Property' })), summary];
  await forwardingJobDone(system.client, violations.id, forwarded);
  expect(await deliveryResult(system.client, violations.id, summary)).toMatchObject({ ok: true });
  await hook.waitForRequests(11);
  const received = bodies(hook);
  expect(received).toHaveLength(11);
  expect(received.map((b) => b.properties)).toContainEqual(expect.objectContaining({ violationField: MORE_VIOLATIONS_FIELD, violationType: 'Other', violationDescription: `${3_000 - (MAX_VIOLATIONS_PER_MESSAGE - 1)} more violations of this message, not listed one by one` }));
});

it("carries Segment's properties: the call's own sentAt, appVersion, sourceSlug, the original context.app and context.library, a bounded name", async () => {
  const { shop, writeKey, violations, hook } = await forwardingSource('shape', [itemsRule]);
  // Event names are at most 1,024 characters; the description quotes at most 200 of them.
  const longName = `Checkout ${'x'.repeat(1_000)}`;
  const sentAt = new Date(Date.now() - 1_000).toISOString();
  const app = { name: 'Shop', version: '2.1.0', build: '42' };
  const library = { name: 'analytics-ios', version: '4.1.5' };
  const event = { type: 'track', userId: 'vb-u', event: longName, messageId: 'vb-shape', sentAt, context: { app, library } };
  expect((await system.app.inject({ method: 'POST', url: '/v1/track', headers: { authorization: basicAuth(writeKey) }, payload: event })).statusCode).toBe(200);

  const generated = violationMessageId('vb-shape', { field: 'event', violationType: 'Unplanned-Event' });
  await forwardingJobDone(system.client, violations.id, [generated]);
  expect(await deliveryResult(system.client, violations.id, generated)).toMatchObject({ ok: true });
  const [body] = bodies(hook);
  expect(body.properties).toMatchObject({ eventMessageID: 'vb-shape', eventName: longName, eventSentAt: sentAt, appVersion: '2.1.0', sourceName: shop.name, sourceSlug: 'violation-bounds-shape', violationField: 'event' });
  expect(body.context).toMatchObject({ app, library });
  const description = body.properties.violationDescription as string;
  expect(description.length).toBeLessThan(300);
  expect(description).toMatch(/^event "Checkout x+…" is not in the tracking plan$/);
});

it('one oversized Violation Generated is left out alone: the other violations of its request are forwarded', async () => {
  const { writeKey, violations, hook } = await forwardingSource('oversized', [itemsRule]);
  // An unplanned event whose name, app and library fill its 32 KB: its Violation Generated carries all three, and more.
  const big = { type: 'track', userId: 'vb-u', event: `Big ${'y'.repeat(996)}`, messageId: 'vb-big', context: { app: { name: 'a'.repeat(15_700) }, library: { name: 'z'.repeat(15_700) } } };
  const small = { type: 'track', userId: 'vb-u', event: 'Small Unplanned', messageId: 'vb-small' };
  expect((await system.app.inject({ method: 'POST', url: '/v1/batch', headers: { authorization: basicAuth(writeKey) }, payload: { batch: [big, small] } })).statusCode).toBe(200);

  const smallId = violationMessageId('vb-small', { field: 'event', violationType: 'Unplanned-Event' });
  await forwardingJobDone(system.client, violations.id, [smallId]);
  expect(await deliveryResult(system.client, violations.id, smallId)).toMatchObject({ ok: true });
  expect(await hasDeliveryWorkflow(system.client, violations.id, violationMessageId('vb-big', { field: 'event', violationType: 'Unplanned-Event' }))).toBe(false);
  expect(bodies(hook).map((b) => b.properties.eventMessageID)).toEqual(['vb-small']);
});

it("a forwarding target that fails to ingest never answers the origin's sender 503, and its forwarded calls still arrive", async () => {
  const { writeKey, violations, hook } = await forwardingSource('failing target', [itemsRule]);
  refusedTarget = violations.id;
  try {
    const event = { type: 'track', userId: 'vb-u', event: 'Unplanned Here', messageId: 'vb-failing' };
    const reply = await system.app.inject({ method: 'POST', url: '/v1/track', headers: { authorization: basicAuth(writeKey) }, payload: event });
    expect(reply.statusCode).toBe(200);
    // The target's ingestion runs in the forwarding job, on the worker, whose starts are not refused.
    const generated = violationMessageId('vb-failing', { field: 'event', violationType: 'Unplanned-Event' });
    await forwardingJobDone(system.client, violations.id, [generated]);
    expect(await deliveryResult(system.client, violations.id, generated)).toMatchObject({ ok: true });
    expect(bodies(hook).map((b) => b.properties.eventMessageID)).toEqual(['vb-failing']);
  } finally {
    refusedTarget = undefined;
  }
});
