import { deliveryWorkflowId } from '../../src/delivery/ids';
import { waitFor } from '../helpers/processes';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { ADMIN_TOKEN, basicAuth, decodedWorkflowHistoryText, deliveryResult, hasDeliveryWorkflow, send, startSystem, type TestSystem } from '../helpers/system';

/**
 * Tracking plans in Segment's shapes, decided at ingest. Real API, real
 * Temporal, the run's worker and store, real receivers. Every source, plan and id is this file's own.
 */

let system: TestSystem;
const receivers: Receiver[] = [];
const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };

beforeAll(async () => {
  // Counts and violations flushed every 200 ms: the overview and the violations route catch up fast.
  system = await startSystem({ healthFlushInterval: 200 });
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await system.close();
});

const admin = (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
  system.app.inject({ method, url, headers: auth, ...(payload !== undefined && { payload: payload as Record<string, unknown> }) });

/** A source of this file's own with one destination posting to a receiver of its own. */
async function sourceWithReceiver(name: string) {
  const hook = await startReceiver();
  receivers.push(hook);
  const { source, writeKey } = await system.store.sources.create(`tracking plans: ${name}`);
  const reply = await admin('POST', `/admin/sources/${source.id}/destinations`, { enabled: true, webhooks: [{ url: hook.url }] });
  expect(reply.statusCode).toBe(201);
  return { source, writeKey, hook, destinationId: reply.json<{ id: string }>().id };
}

/** A rule exported from Segment: draft-07, `labels: {}`, descriptions. */
const orderCompleted = (pattern?: string) => ({
  type: 'TRACK',
  key: 'Order Completed',
  version: 1,
  jsonSchema: {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    labels: {},
    description: 'An order went through',
    properties: {
      context: {},
      traits: { type: 'object', properties: {} },
      properties: {
        type: 'object',
        properties: { order_id: { description: '', type: 'string', ...(pattern && { pattern }) }, total: { type: 'number' } },
        required: ['order_id'],
      },
    },
    required: ['properties'],
  },
});

async function planFor(sourceId: string, rules: unknown[]): Promise<string> {
  const created = await admin('POST', '/admin/tracking-plans', { name: `plan for ${sourceId}` });
  expect(created.statusCode).toBe(201);
  const planId = created.json<{ id: string }>().id;
  expect((await admin('PUT', `/admin/tracking-plans/${planId}/rules`, { rules })).json()).toEqual({ status: 'SUCCESS' });
  expect((await admin('POST', `/admin/tracking-plans/${planId}/sources`, { sourceId })).statusCode).toBe(201);
  return planId;
}

const hasWorkflow = (sourceId: string, messageId: string) => hasDeliveryWorkflow(system.client, sourceId, messageId);

const bodies = (hook: Receiver) => hook.requests.map((r) => JSON.parse(r.body) as Record<string, any>);

describe('plans and rules in Segment\'s shapes', () => {
  it('accepts a rule exported from Segment as is, and refuses (?! with a 400 naming the rule and the path, saving nothing', async () => {
    const created = await admin('POST', '/admin/tracking-plans', { name: 'Segment export', description: 'pasted', type: 'LIVE' });
    expect(created.statusCode).toBe(201);
    const plan = created.json<{ id: string }>();
    expect(plan).toMatchObject({ id: expect.stringMatching(/^tp_/), name: 'Segment export', description: 'pasted', type: 'LIVE' });

    expect((await admin('PUT', `/admin/tracking-plans/${plan.id}/rules`, { rules: [orderCompleted()] })).statusCode).toBe(200);
    const lookahead = await admin('PATCH', `/admin/tracking-plans/${plan.id}/rules`, { rules: [{ ...orderCompleted('^(?!test).*$'), version: 2 }] });
    expect(lookahead.statusCode).toBe(400);
    expect(lookahead.json().message).toBe(
      'rules[0].jsonSchema/properties/properties/properties/order_id/pattern: (TRACK "Order Completed" version 2) is not an RE2 regular expression (lookarounds and backreferences are not supported): error parsing regexp: invalid or unsupported Perl syntax: `(?!`',
    );
    const typo = await admin('PUT', `/admin/tracking-plans/${plan.id}/rules`, { rules: [{ ...orderCompleted(), jsonSchema: { ...orderCompleted().jsonSchema, requird: ['x'] } }] });
    expect(typo.statusCode).toBe(400);
    expect(typo.json().message).toBe('rules[0].jsonSchema/requird: (TRACK "Order Completed" version 1) unknown keyword "requird"');

    const rules = await admin('GET', `/admin/tracking-plans/${plan.id}/rules?pagination[count]=10`);
    expect(rules.json()).toMatchObject({ rules: [{ type: 'TRACK', key: 'Order Completed', version: 1, jsonSchema: orderCompleted().jsonSchema }], pagination: { totalEntries: 1 } });

    // PATCH renames with newKey; DELETE removes by (type, key, version).
    expect((await admin('PATCH', `/admin/tracking-plans/${plan.id}/rules`, { rules: [{ ...orderCompleted(), newKey: 'Order Placed' }] })).statusCode).toBe(200);
    expect((await admin('GET', `/admin/tracking-plans/${plan.id}/rules`)).json().rules.map((r: { key: string }) => r.key)).toEqual(['Order Placed']);
    expect((await admin('DELETE', `/admin/tracking-plans/${plan.id}/rules`, { rules: [{ type: 'TRACK', key: 'Order Placed', version: 1 }] })).statusCode).toBe(200);
    expect((await admin('GET', `/admin/tracking-plans/${plan.id}/rules`)).json().rules).toEqual([]);
  });

  it('connects a source to one plan: a second plan is 409, and after disconnecting it may connect', async () => {
    const { source } = await system.store.sources.create('tracking plans: one plan a source');
    const [first, second] = await Promise.all(['first', 'second'].map(async (name) => (await admin('POST', '/admin/tracking-plans', { name })).json<{ id: string }>().id));
    expect((await admin('POST', `/admin/tracking-plans/${first}/sources`, { sourceId: source.id })).statusCode).toBe(201);
    expect((await admin('POST', `/admin/tracking-plans/${first}/sources`, { sourceId: source.id })).statusCode).toBe(200);
    const taken = await admin('POST', `/admin/tracking-plans/${second}/sources`, { sourceId: source.id });
    expect(taken.statusCode).toBe(409);
    expect(taken.json().message).toContain('sourceId: source');
    expect((await admin('DELETE', `/admin/tracking-plans/${first}/sources/${source.id}`)).statusCode).toBe(204);
    expect((await admin('POST', `/admin/tracking-plans/${second}/sources`, { sourceId: source.id })).statusCode).toBe(201);
    expect((await admin('GET', `/admin/tracking-plans/${second}/sources`)).json()).toEqual({ sourceIds: [source.id] });
    // Every change audited once: the refused and the repeated connection wrote nothing.
    const audit = (await admin('GET', '/admin/audit?limit=200')).json<{ entries: Array<{ action: string; target: string }> }>();
    expect(audit.entries.filter((e) => e.action === 'tracking_plan.source.connect' && e.target.endsWith(`:${source.id}`))).toHaveLength(2);
  });

  it('serves a source\'s schema controls with Segment\'s defaults (allow everything), and PATCHes one setting at a time', async () => {
    const { source } = await system.store.sources.create('tracking plans: controls');
    const defaults = (await admin('GET', `/admin/sources/${source.id}/settings`)).json();
    expect(defaults).toEqual({
      track: { allowUnplannedEvents: true, allowUnplannedEventProperties: true, allowEventOnViolations: true, allowPropertiesOnViolations: true, commonEventOnViolations: 'ALLOW' },
      identify: { allowUnplannedTraits: true, allowTraitsOnViolations: true, commonEventOnViolations: 'ALLOW' },
      group: { allowUnplannedTraits: true, allowTraitsOnViolations: true, commonEventOnViolations: 'ALLOW' },
    });
    const patched = await admin('PATCH', `/admin/sources/${source.id}/settings`, { track: { allowUnplannedEvents: false } });
    expect(patched.json()).toEqual({ ...defaults, track: { ...defaults.track, allowUnplannedEvents: false } });
    const bad = await admin('PATCH', `/admin/sources/${source.id}/settings`, { track: { commonEventOnViolations: 'OMIT_TRAITS' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toContain('commonEventOnViolations');
    const itself = await admin('PATCH', `/admin/sources/${source.id}/settings`, { forwardingViolationsTo: source.id });
    expect(itself.json().message).toBe("forwardingViolationsTo: must be another source (forwarding a source's events into itself would loop)");
  });
});

describe('decided at ingest', () => {
  it('with blocking on, a batch of a valid, a violating and an unplanned event is 200; only the valid one is delivered, the others forwarded', async () => {
    const shop = await sourceWithReceiver('shop');
    const blocked = await sourceWithReceiver('blocked events');
    const violations = await sourceWithReceiver('violations');
    const planId = await planFor(shop.source.id, [orderCompleted()]);
    const controls = await admin('PATCH', `/admin/sources/${shop.source.id}/settings`, {
      track: { allowUnplannedEvents: false, allowEventOnViolations: false },
      forwardingBlockedEventsTo: blocked.source.id,
      forwardingViolationsTo: violations.source.id,
    });
    expect(controls.statusCode).toBe(200);

    const batch = [
      { type: 'track', userId: 'tp-u1', event: 'Order Completed', messageId: 'tp-valid', properties: { order_id: 'o-1', total: 3 } },
      { type: 'track', userId: 'tp-u1', event: 'Order Completed', messageId: 'tp-missing', properties: { total: 3 } },
      { type: 'track', userId: 'tp-u1', event: 'Order Complete', messageId: 'tp-unplanned', properties: { order_id: 'o-2' } },
    ];
    const reply = await system.app.inject({ method: 'POST', url: '/v1/batch', headers: { authorization: basicAuth(shop.writeKey) }, payload: { batch } });
    expect(reply.statusCode).toBe(200);

    expect(await deliveryResult(system.client, shop.source.id, 'tp-valid')).toMatchObject({ ok: true });
    expect(await hasWorkflow(shop.source.id, 'tp-missing')).toBe(false);
    expect(await hasWorkflow(shop.source.id, 'tp-unplanned')).toBe(false);
    expect(bodies(shop.hook).map((b) => b.messageId)).toEqual(['tp-valid']);

    // Both blocked events reach the blocked-events source's destination, unchanged.
    await blocked.hook.waitForRequests(2);
    expect(bodies(blocked.hook).map((b) => [b.messageId, b.event]).sort()).toEqual([
      ['tp-missing', 'Order Completed'],
      ['tp-unplanned', 'Order Complete'],
    ]);
    // One Violation Generated per violation, in Segment's property names, its id derived from the original.
    await violations.hook.waitForRequests(2);
    const generated = bodies(violations.hook);
    expect(generated.every((b) => b.event === 'Violation Generated' && b.userId === 'schema-violations' && /^sch-[0-9a-f]{32}$/.test(b.messageId))).toBe(true);
    expect(generated.map((b) => b.properties)).toContainEqual(
      expect.objectContaining({
        eventMessageID: 'tp-missing',
        eventName: 'Order Completed',
        eventType: 'track',
        sourceID: shop.source.id,
        trackingPlanID: planId,
        violationField: 'properties.order_id',
        violationType: 'Required',
        violationDescription: 'properties.order_id is required',
      }),
    );
    expect(generated.map((b) => b.properties)).toContainEqual(expect.objectContaining({ eventMessageID: 'tp-unplanned', violationType: 'Unplanned-Event', violationField: 'event' }));

    // The sender's retry of the same batch forwards nothing twice: the derived ids dedupe.
    expect((await system.app.inject({ method: 'POST', url: '/v1/batch', headers: { authorization: basicAuth(shop.writeKey) }, payload: { batch } })).statusCode).toBe(200);
    for (const id of generated.map((b) => b.messageId as string)) expect((await deliveryResult(system.client, violations.source.id, id)).ok).toBe(true);
    expect(violations.hook.requests).toHaveLength(2);

    // Counted: filtered.plan in the overview, the violations route, the metric (this source's series only).
    await waitFor(async () => {
      const overview = (await admin('GET', `/admin/destinations/${shop.destinationId}/overview`)).json();
      expect(overview.filtered.plan).toBe(4);
    }, 10_000);
    const listed = await waitFor(async () => {
      const reply = await admin('GET', `/admin/sources/${shop.source.id}/violations`);
      const found = reply.json<{ violations: Array<Record<string, unknown>> }>().violations;
      expect(found.length).toBeGreaterThanOrEqual(2);
      return found;
    }, 10_000);
    expect(listed).toContainEqual(expect.objectContaining({ eventType: 'track', eventName: 'Order Completed', field: 'properties.order_id', violationType: 'Required', lastMessageId: 'tp-missing' }));
    expect(listed).toContainEqual(expect.objectContaining({ eventName: 'Order Complete', field: 'event', violationType: 'Unplanned-Event' }));
    expect((await admin('GET', `/admin/sources/${shop.source.id}/violations?eventName=${encodeURIComponent('Order Complete')}`)).json().violations).toHaveLength(1);
    const metrics = (await system.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toContain(`switchyard_tracking_plan_violations_total{source="${shop.source.id}",event_type="track",violation_type="Required"} 2`);
  });

  it('with unplanned properties omitted, the receiver\'s body lacks them, context.protocols.omitted names them, and the decoded history lacks their values', async () => {
    const shop = await sourceWithReceiver('omitted');
    await planFor(shop.source.id, [orderCompleted()]);
    await admin('PATCH', `/admin/sources/${shop.source.id}/settings`, { track: { allowUnplannedEventProperties: false } });
    await send(system.app, shop.writeKey, 'track', { userId: 'tp-u2', event: 'Order Completed', messageId: 'tp-omitted', properties: { order_id: 'o-3', coupon: 'SPRING-SECRET-4217' } });

    expect(await deliveryResult(system.client, shop.source.id, 'tp-omitted')).toMatchObject({ ok: true });
    const [delivered] = bodies(shop.hook);
    expect(delivered.properties).toEqual({ order_id: 'o-3' });
    expect(delivered.context.protocols).toEqual({ omitted: ['properties.coupon'] });
    const history = await decodedWorkflowHistoryText(system, deliveryWorkflowId(shop.source.id, 'tp-omitted'));
    expect(history).toContain('o-3');
    expect(history).not.toContain('SPRING-SECRET-4217');
  });

  it('validates against context.protocols.event_version, else the oldest version', async () => {
    const shop = await sourceWithReceiver('versions');
    const v2 = { ...orderCompleted(), version: 2, jsonSchema: { ...orderCompleted().jsonSchema, properties: { properties: { type: 'object', properties: { order_id: { type: 'number' } } } } } };
    await planFor(shop.source.id, [orderCompleted(), v2]);
    await admin('PATCH', `/admin/sources/${shop.source.id}/settings`, { track: { allowEventOnViolations: false } });
    // order_id as a number: a violation of version 1 (the oldest, used without event_version), valid in version 2.
    await send(system.app, shop.writeKey, 'track', { userId: 'tp-u3', event: 'Order Completed', messageId: 'tp-v-oldest', properties: { order_id: 7 } });
    await send(system.app, shop.writeKey, 'track', { userId: 'tp-u3', event: 'Order Completed', messageId: 'tp-v2', properties: { order_id: 7 }, context: { protocols: { event_version: 2 } } });
    expect(await deliveryResult(system.client, shop.source.id, 'tp-v2')).toMatchObject({ ok: true });
    expect(await hasWorkflow(shop.source.id, 'tp-v-oldest')).toBe(false);
  });

  it('answers ^(a+)+$ against 40 a\'s and a ! at once: the pattern runs on RE2, never backtracking', async () => {
    const shop = await sourceWithReceiver('redos');
    await planFor(shop.source.id, [orderCompleted('^(a+)+$')]);
    const started = Date.now();
    await send(system.app, shop.writeKey, 'track', { userId: 'tp-u4', event: 'Order Completed', messageId: 'tp-redos', properties: { order_id: `${'a'.repeat(40)}!` } });
    // A hang guard, not a speed test: a backtracking engine needs about 2^40 steps here.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await deliveryResult(system.client, shop.source.id, 'tp-redos')).toMatchObject({ ok: true });
    const listed = await waitFor(async () => {
      const found = (await admin('GET', `/admin/sources/${shop.source.id}/violations`)).json<{ violations: Array<Record<string, unknown>> }>().violations;
      expect(found).toHaveLength(1);
      return found;
    }, 10_000);
    expect(listed[0]).toMatchObject({ field: 'properties.order_id', violationType: 'Pattern', description: 'properties.order_id must match the pattern ^(a+)+$' });
  });
  it('a DELETE regulation drops the violation rows of the buckets its user was counted in, and keeps another user\'s', async () => {
    const [erased, kept] = await Promise.all([sourceWithReceiver('regulated violations'), sourceWithReceiver('kept violations')]);
    await Promise.all([planFor(erased.source.id, [orderCompleted()]), planFor(kept.source.id, [orderCompleted()])]);
    await send(system.app, erased.writeKey, 'track', { userId: 'tp-erased-user', event: 'Order Completed', messageId: 'tp-reg-a', properties: {} });
    await send(system.app, kept.writeKey, 'track', { userId: 'tp-kept-user', event: 'Order Completed', messageId: 'tp-reg-b', properties: {} });
    const listed = (sourceId: string) => admin('GET', `/admin/sources/${sourceId}/violations`).then((r) => r.json<{ violations: Array<Record<string, unknown>> }>().violations);
    // Both buckets written (with their users, in the same write) before the regulation.
    await waitFor(async () => {
      expect(await listed(erased.source.id)).toHaveLength(1);
      expect(await listed(kept.source.id)).toHaveLength(1);
    }, 10_000);
    const regulation = await admin('POST', '/admin/regulations', { regulationType: 'DELETE', subjectType: 'USER_ID', subjectIds: ['tp-erased-user'] });
    expect(regulation.statusCode).toBe(201);
    // The regulation's answer comes once its store steps are done: the bucket is already gone.
    expect(await listed(erased.source.id)).toEqual([]);
    expect(await listed(kept.source.id)).toEqual([expect.objectContaining({ eventName: 'Order Completed', field: 'properties.order_id', lastMessageId: 'tp-reg-b' })]);
    // Another API process's counts, held in memory across the regulation, land after it: the bucket of a
    // minute that began before the erasure goes as the regulation would have taken it; a later minute's stays.
    // Each minute has its own field, so the list does not add the two up; the regulation's own minute, never the clock's.
    const minute = Math.floor(Date.parse(regulation.json<{ createdAt: string }>().createdAt) / 60_000);
    const late = (at: number) => ({ sourceId: erased.source.id, minute: at, eventType: 'track', eventName: 'Order Completed', field: `properties.late_${at}`, violationType: 'Required', description: 'late', count: 1, firstSeenAt: new Date(at * 60_000).toISOString(), lastSeenAt: new Date(at * 60_000).toISOString(), lastMessageId: `tp-late-${at}` });
    await system.store.violations.add([late(minute), late(minute + 2)], { users: [minute, minute + 2].map((at) => ({ sourceId: erased.source.id, minute: at, userId: 'tp-erased-user' })) });
    expect((await system.store.violations.list(erased.source.id, minute - 10, minute + 10)).map((v) => v.lastMessageId)).toEqual([`tp-late-${minute + 2}`]);
  });
});
