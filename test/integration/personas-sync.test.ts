import { createHmac } from 'node:crypto';
import { ScheduleNotFoundError } from '@temporalio/client';
import { deliveryWorkflowId } from '../../src/delivery/ids';
import { admin, createDefinition, expectMessages, ingestBatch, NEVER, syncNow, valuesByUser } from '../helpers/personas';
import type { Receiver } from '../helpers/receiver';
import { sourceWithDestination, type TestSystem, useSystem } from '../helpers/system';

let system: TestSystem;
let receiver: Receiver;
useSystem((s, r) => {
  system = s;
  receiver = r;
});

const DAY = 86_400_000;
const daysAgo = (days: number) => new Date(Date.now() - days * DAY).toISOString();

async function newSource(sharedSecret?: string) {
  return sourceWithDestination(system.store, { sharedSecret, webhooks: [{ url: receiver.url, headers: {} }] });
}

const identify = (userId: string, traits: Record<string, unknown>) => ({ type: 'identify', userId, traits });
const order = (userId: string, total: number, timestamp = new Date().toISOString()) => ({ type: 'track', userId, event: 'Order Completed', properties: { total }, timestamp, messageId: `order-${userId}-${total}-${timestamp}` });

describe('audience sync (seed: Personas rules)', () => {
  it('sends an identify call whose trait is the snake_case form of the audience name, through the normal signed delivery path', async () => {
    const { source, writeKey } = await newSource('personas-secret');
    await ingestBatch(system.app, writeKey, [identify('ada', { plan: 'Premium' }), identify('bob', { plan: 'Free' })]);
    const audience = await createDefinition(system.app, source.id, 'audiences', { name: 'First Time Shopper', definition: { trait: 'plan', op: 'eq', value: 'Premium' }, schedule: NEVER, paused: true });
    expect(audience.key).toBe('first_time_shopper');

    const report = await syncNow(system.app, system.client, 'audiences', audience.id);
    expect(report).toMatchObject({ status: 'committed', version: 1, changes: 1, started: 1, existing: 0 });
    const [message] = await expectMessages(receiver, audience.id, 1);
    expect(message.body).toMatchObject({
      version: 1,
      type: 'identify',
      userId: 'ada',
      traits: { first_time_shopper: true },
      context: { personas: { computation_class: 'audience', computation_id: audience.id, computation_key: 'first_time_shopper' } },
    });
    expect(message.body.messageId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // Same signing as every other message of the source (seed: Authentication).
    expect(message.request.headers['x-signature']).toBe(createHmac('sha1', 'personas-secret').update(message.request.body, 'utf8').digest('hex'));
    // The same delivery workflow as an ingested call's, on the Personas delivery task queue.
    const delivery = await system.client.workflow.getHandle(deliveryWorkflowId(source.id, message.body.messageId)).describe();
    expect({ type: delivery.type, taskQueue: delivery.taskQueue }).toEqual({ type: 'deliverMessage', taskQueue: `${system.config.temporalTaskQueue}-personas` });
  });

  it('sends every member when the audience is created, without being asked', async () => {
    const { source, writeKey } = await newSource();
    await ingestBatch(system.app, writeKey, [identify('c1', { plan: 'Premium' }), identify('c2', { plan: 'Premium' }), identify('c3', { plan: 'Free' })]);
    // Not paused: its Temporal Schedule triggers the first sync at once.
    const audience = await createDefinition(system.app, source.id, 'audiences', { name: 'Premium Users', definition: { trait: 'plan', op: 'eq', value: 'Premium' }, schedule: NEVER });
    const messages = await expectMessages(receiver, audience.id, 2);
    expect(valuesByUser(messages, 'premium_users')).toEqual({ c1: true, c2: true });
  });

  it('after the first sync, a trait change sends exactly one false to the user who left and one true to the user who joined; a quiet sync sends nothing', async () => {
    const { source, writeKey } = await newSource();
    await ingestBatch(system.app, writeKey, [identify('d1', { plan: 'Premium' }), identify('d2', { plan: 'Premium' }), identify('d3', { plan: 'Free' })]);
    const audience = await createDefinition(system.app, source.id, 'audiences', { name: 'Premium', definition: { trait: 'plan', op: 'eq', value: 'Premium' }, schedule: NEVER, paused: true });
    await syncNow(system.app, system.client, 'audiences', audience.id);
    await expectMessages(receiver, audience.id, 2);

    await ingestBatch(system.app, writeKey, [identify('d1', { plan: 'Free' })]);
    expect(await syncNow(system.app, system.client, 'audiences', audience.id)).toMatchObject({ status: 'committed', version: 2, changes: 1 });
    const afterLeave = await expectMessages(receiver, audience.id, 3);
    expect(valuesByUser(afterLeave.slice(2), 'premium')).toEqual({ d1: false });

    await ingestBatch(system.app, writeKey, [identify('d3', { plan: 'Premium', seats: 4 })]);
    expect(await syncNow(system.app, system.client, 'audiences', audience.id)).toMatchObject({ status: 'committed', version: 3, changes: 1 });
    const afterJoin = await expectMessages(receiver, audience.id, 4);
    expect(valuesByUser(afterJoin.slice(3), 'premium')).toEqual({ d3: true });

    // A trait change that does not change membership is not a change of the audience.
    await ingestBatch(system.app, writeKey, [identify('d3', { seats: 5 })]);
    expect(await syncNow(system.app, system.client, 'audiences', audience.id)).toMatchObject({ status: 'committed', version: 4, changes: 0, started: 0 });
    await expectMessages(receiver, audience.id, 4);
    // Each message id is new: they are derived from (audience, version, user).
    expect(new Set(afterJoin.map((m) => m.body.messageId)).size).toBe(4);
  });

  it('evaluates event conditions: "ordered exactly once in the last 30 days"', async () => {
    const { source, writeKey } = await newSource();
    await ingestBatch(system.app, writeKey, [
      order('once', 20),
      order('twice', 20),
      order('twice', 30),
      order('long-ago', 20, daysAgo(45)),
      order('long-ago-and-now', 20, daysAgo(45)),
      order('long-ago-and-now', 25),
      identify('never', { plan: 'Free' }),
    ]);
    const audience = await createDefinition(system.app, source.id, 'audiences', {
      name: 'First Time Shopper',
      definition: { event: 'Order Completed', count: { op: 'eq', value: 1 }, within: '30d' },
      schedule: NEVER,
      paused: true,
    });
    await syncNow(system.app, system.client, 'audiences', audience.id);
    expect(valuesByUser(await expectMessages(receiver, audience.id, 2), 'first_time_shopper')).toEqual({ once: true, 'long-ago-and-now': true });
  });

  it('counts an aliased anonymous history and the user as one person', async () => {
    const { source, writeKey } = await newSource();
    await ingestBatch(system.app, writeKey, [
      { type: 'track', anonymousId: 'anon-7', event: 'Order Completed', properties: { total: 10 }, messageId: 'alias-o1' },
      { type: 'track', userId: 'eve', event: 'Order Completed', properties: { total: 15 }, messageId: 'alias-o2' },
    ]);
    const audience = await createDefinition(system.app, source.id, 'audiences', { name: 'Repeat Buyers', definition: { event: 'Order Completed', count: { op: 'gte', value: 2 } }, schedule: NEVER, paused: true });
    expect(await syncNow(system.app, system.client, 'audiences', audience.id)).toMatchObject({ changes: 0 });

    await ingestBatch(system.app, writeKey, [{ type: 'alias', previousId: 'anon-7', userId: 'eve' }]);
    await syncNow(system.app, system.client, 'audiences', audience.id);
    expect(valuesByUser(await expectMessages(receiver, audience.id, 1), 'repeat_buyers')).toEqual({ eve: true });
  });

  it('sends nothing and keeps the snapshot while the source has no enabled destination; the first sync after sends every member', async () => {
    const { source, writeKey, destination } = await newSource();
    await system.store.destinations.update(destination.id, { enabled: false });
    await ingestBatch(system.app, writeKey, [identify('f1', { vip: true })]);
    const audience = await createDefinition(system.app, source.id, 'audiences', { name: 'VIP', definition: { trait: 'vip', op: 'eq', value: true }, schedule: NEVER, paused: true });
    expect(await syncNow(system.app, system.client, 'audiences', audience.id)).toMatchObject({ status: 'no_destinations' });

    await system.store.destinations.update(destination.id, { enabled: true });
    expect(await syncNow(system.app, system.client, 'audiences', audience.id)).toMatchObject({ status: 'committed', version: 1, changes: 1 });
    expect(valuesByUser(await expectMessages(receiver, audience.id, 1), 'vip')).toEqual({ f1: true });
  });

  it('a DELETE regulation removes the user\'s profile, and later syncs say nothing about that user', async () => {
    const { source, writeKey } = await newSource();
    await ingestBatch(system.app, writeKey, [identify('gone-user', { plan: 'Premium' }), identify('stays', { plan: 'Premium' }), order('gone-user', 5)]);
    const audience = await createDefinition(system.app, source.id, 'audiences', { name: 'Premium Members', definition: { trait: 'plan', op: 'eq', value: 'Premium' }, schedule: NEVER, paused: true });
    await syncNow(system.app, system.client, 'audiences', audience.id);
    await expectMessages(receiver, audience.id, 2);
    expect(await system.store.personas.profiles.get(source.id, 'gone-user')).toMatchObject({ eventCount: 1 });

    const regulation = await admin(system.app, 'POST', '/regulations', { regulationType: 'DELETE', subjectType: 'USER_ID', subjectIds: ['gone-user'] });
    expect(regulation.status).toBe(201);
    expect(await system.store.personas.profiles.get(source.id, 'gone-user')).toBeUndefined();
    expect(await system.store.personas.profiles.get(source.id, 'stays')).toBeDefined();
    // No `false` for the deleted user: the snapshot forgot them too.
    expect(await syncNow(system.app, system.client, 'audiences', audience.id)).toMatchObject({ status: 'committed', changes: 0 });
    await expectMessages(receiver, audience.id, 2);
  });
});

describe('computed trait sync', () => {
  it('sends each user\'s value on the first sync, then only values that changed', async () => {
    const { source, writeKey } = await newSource();
    await ingestBatch(system.app, writeKey, [order('h1', 100), order('h1', 50.5), order('h2', 20), order('h3', 999, daysAgo(200))]);
    const trait = await createDefinition(system.app, source.id, 'computed-traits', {
      name: 'total_revenue_180_days',
      definition: { type: 'sum', event: 'Order Completed', property: 'total', within: '180d' },
      schedule: NEVER,
      paused: true,
    });
    expect(await syncNow(system.app, system.client, 'computed-traits', trait.id)).toMatchObject({ status: 'committed', changes: 2 });
    const first = await expectMessages(receiver, trait.id, 2);
    expect(valuesByUser(first, 'total_revenue_180_days')).toEqual({ h1: 150.5, h2: 20 });
    expect(first[0].body.context.personas).toMatchObject({ computation_class: 'computed_trait', computation_key: 'total_revenue_180_days' });

    await ingestBatch(system.app, writeKey, [order('h2', 5)]);
    expect(await syncNow(system.app, system.client, 'computed-traits', trait.id)).toMatchObject({ status: 'committed', changes: 1 });
    expect(valuesByUser((await expectMessages(receiver, trait.id, 3)).slice(2), 'total_revenue_180_days')).toEqual({ h2: 25 });

    expect(await syncNow(system.app, system.client, 'computed-traits', trait.id)).toMatchObject({ status: 'committed', changes: 0, started: 0 });
    await expectMessages(receiver, trait.id, 3);
  });

  it('most_frequent and last read the property of the events', async () => {
    const { source, writeKey } = await newSource();
    const view = (userId: string, category: string, minutesAgo: number) => ({
      type: 'track',
      userId,
      event: 'Product Viewed',
      properties: { category },
      timestamp: new Date(Date.now() - minutesAgo * 60_000).toISOString(),
      messageId: `view-${userId}-${category}-${minutesAgo}`,
    });
    await ingestBatch(system.app, writeKey, [view('k1', 'shoes', 30), view('k1', 'shoes', 20), view('k1', 'hats', 10)]);
    const favourite = await createDefinition(system.app, source.id, 'computed-traits', { name: 'Favourite Category', definition: { type: 'most_frequent', event: 'Product Viewed', property: 'category' }, schedule: NEVER, paused: true });
    const latest = await createDefinition(system.app, source.id, 'computed-traits', { name: 'Last Category', definition: { type: 'last', event: 'Product Viewed', property: 'category' }, schedule: NEVER, paused: true });
    await syncNow(system.app, system.client, 'computed-traits', favourite.id);
    await syncNow(system.app, system.client, 'computed-traits', latest.id);
    expect(valuesByUser(await expectMessages(receiver, favourite.id, 1), 'favourite_category')).toEqual({ k1: 'shoes' });
    expect(valuesByUser(await expectMessages(receiver, latest.id, 1, 0), 'last_category')).toEqual({ k1: 'hats' });
  });
});

describe('the Temporal Schedule of a definition', () => {
  it('exists with the cron expression, pauses and resumes with it, and is deleted with its audience', async () => {
    const { source } = await newSource();
    const audience = await createDefinition(system.app, source.id, 'audiences', { name: 'Scheduled', definition: { trait: 'plan', op: 'exists' }, schedule: NEVER });
    const handle = system.client.schedule.getHandle(audience.scheduleId);
    let described = await handle.describe();
    expect(described.action).toMatchObject({ type: 'startWorkflow', workflowType: 'syncAudience', taskQueue: system.config.temporalTaskQueue });
    expect(described.state.paused).toBe(false);

    expect((await admin(system.app, 'PATCH', `/audiences/${audience.id}`, { paused: true })).body).toMatchObject({ paused: true });
    described = await handle.describe();
    expect(described.state.paused).toBe(true);

    const everyFiveMinutes = await admin(system.app, 'PATCH', `/audiences/${audience.id}`, { paused: false, schedule: '*/5 * * * *' });
    expect(everyFiveMinutes.body).toMatchObject({ paused: false, schedule: '*/5 * * * *' });
    described = await handle.describe();
    expect(described.state.paused).toBe(false);
    // The next actions are five minutes apart: the schedule runs on the new expression.
    const [a, b] = described.info.nextActionTimes;
    expect(b.getTime() - a.getTime()).toBe(5 * 60_000);

    expect((await admin(system.app, 'DELETE', `/audiences/${audience.id}`)).status).toBe(204);
    await expect(handle.describe()).rejects.toBeInstanceOf(ScheduleNotFoundError);
    expect((await admin(system.app, 'GET', `/audiences/${audience.id}`)).status).toBe(404);
  });

  it('a computed trait gets its own schedule running syncComputedTrait, with the default cron when none is given', async () => {
    const { source } = await newSource();
    const trait = await createDefinition(system.app, source.id, 'computed-traits', { name: 'Orders', definition: { type: 'count', event: 'Order Completed' }, paused: true });
    const view = await admin(system.app, 'GET', `/computed-traits/${trait.id}`);
    expect(view.body).toMatchObject({ schedule: '*/15 * * * *', paused: true, key: 'orders' });
    const described = await system.client.schedule.getHandle(trait.scheduleId).describe();
    expect(described.action).toMatchObject({ workflowType: 'syncComputedTrait' });
    expect(described.state.paused).toBe(true);
    const [a, b] = described.info.nextActionTimes;
    expect(b.getTime() - a.getTime()).toBe(15 * 60_000);
    expect((await admin(system.app, 'DELETE', `/sources/${source.id}/computed-traits/${trait.id}`)).status).toBe(204);
    await expect(system.client.schedule.getHandle(trait.scheduleId).describe()).rejects.toBeInstanceOf(ScheduleNotFoundError);
  });

  it('a sync whose definition is gone (its source was deleted) ends and removes its schedule', async () => {
    const { source } = await newSource();
    const audience = await createDefinition(system.app, source.id, 'audiences', { name: 'Orphan', definition: { trait: 'plan', op: 'exists' }, schedule: NEVER, paused: true });
    await system.store.sources.delete(source.id);
    // The definition went with its source (foreign key); the schedule is still in Temporal until a sync finds that out.
    await system.client.schedule.getHandle(audience.scheduleId).describe();
    const started = await system.client.workflow.start('syncAudience', { taskQueue: system.config.temporalTaskQueue, workflowId: `orphan-${audience.id}`, args: [{ computation: { kind: 'audience', id: audience.id } }] });
    expect(await started.result()).toMatchObject({ status: 'gone' });
    await expect(system.client.schedule.getHandle(audience.scheduleId).describe()).rejects.toBeInstanceOf(ScheduleNotFoundError);
  });
});

describe('the definitions API', () => {
  let sourceId: string;
  beforeAll(async () => {
    sourceId = (await newSource()).source.id;
  });

  it.each([
    ['an unknown operator', { all: [{ trait: 'plan', op: 'eq', value: 'a' }, { trait: 'plan', op: 'equals', value: 'b' }] }, 'definition.all[1].op: unknown operator "equals"; expected one of eq, neq, gt, gte, lt, lte, exists, contains'],
    ['a node with no condition', { any: [{ trait: 'plan', op: 'exists' }, { foo: 1 }] }, 'definition.any[1]: must have one of trait, event, all, any, not (found foo)'],
    ['a missing value', { not: { trait: 'plan', op: 'gt' } }, 'definition.not.value: is required for "gt"'],
    ['an unknown field of an event condition', { event: 'Order Completed', times: 2 }, 'definition.times: is not a field of an event condition (allowed: event, count, within, where)'],
    ['a bad window', { event: 'Order Completed', within: '30 days' }, 'definition.within: "30 days" is not a window; use a whole number of m, h, d or w, e.g. "30d"'],
    ['a bad where operator', { event: 'Order Completed', where: [{ property: 'total', op: 'between', value: 1 }] }, 'definition.where[0].op: unknown operator "between"'],
    ['a count that is not a whole number', { event: 'Order Completed', count: { op: 'gte', value: 1.5 } }, 'definition.count.value: must be a whole number, 0 or more'],
    ['an array instead of a condition', [{ trait: 'plan', op: 'exists' }], 'definition: must be a condition object'],
    ['an empty all', { all: [] }, 'definition.all: must hold at least one condition'],
  ])('rejects %s with 400 naming the JSON path', async (_case, definition, message) => {
    const response = await admin(system.app, 'POST', `/sources/${sourceId}/audiences`, { name: 'Bad', definition, paused: true });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('invalid_request');
    expect(response.body.message).toContain(message);
  });

  it.each([
    ['a missing property for sum', { type: 'sum', event: 'Order Completed' }, 'definition.property: must be a non-empty string'],
    ['an unknown type', { type: 'median', event: 'Order Completed', property: 'total' }, 'definition.type: unknown type "median"; expected one of count, sum, avg, min, max, most_frequent, first, last'],
    ['a property on count', { type: 'count', event: 'Order Completed', property: 'total' }, 'definition.property: is not used by "count"'],
  ])('rejects a computed trait with %s', async (_case, definition, message) => {
    const response = await admin(system.app, 'POST', `/sources/${sourceId}/computed-traits`, { name: 'Bad Trait', definition, paused: true });
    expect(response.status).toBe(400);
    expect(response.body.message).toContain(message);
  });

  it('rejects a bad cron expression, a name with no letters, a renaming that changes the key, and a key already in use', async () => {
    const bad = await admin(system.app, 'POST', `/sources/${sourceId}/audiences`, { name: 'Cron', definition: { trait: 'a', op: 'exists' }, schedule: '*/15 * * *' });
    expect(bad).toMatchObject({ status: 400, body: { message: expect.stringContaining('schedule: "*/15 * * *" has 4 field(s)') } });
    expect((await admin(system.app, 'POST', `/sources/${sourceId}/audiences`, { name: '!!!', definition: { trait: 'a', op: 'exists' } })).status).toBe(400);

    const audience = await createDefinition(system.app, sourceId, 'audiences', { name: 'Big Spenders', definition: { trait: 'a', op: 'exists' }, paused: true });
    expect((await admin(system.app, 'PATCH', `/audiences/${audience.id}`, { name: 'big spenders' })).body).toMatchObject({ name: 'big spenders', key: 'big_spenders' });
    expect((await admin(system.app, 'PATCH', `/audiences/${audience.id}`, { name: 'Huge Spenders' })).body.message).toContain('would change the trait key from big_spenders to huge_spenders');
    const clash = await admin(system.app, 'POST', `/sources/${sourceId}/computed-traits`, { name: 'big-spenders', definition: { type: 'count', event: 'x' }, paused: true });
    expect(clash).toMatchObject({ status: 409, body: { code: 'conflict', message: expect.stringContaining(`"big_spenders" is already sent by audience ${audience.id}`) } });
    expect((await admin(system.app, 'PATCH', `/audiences/${audience.id}`, { definition: { trait: 'a', op: 'lt', value: true } })).body.message).toBe('definition.value: "lt" compares numbers or strings (such as ISO dates), not booleans');
  });

  it('lists, reads by nested path, needs the admin token, and 404s an unknown source or a wrong source', async () => {
    const audience = await createDefinition(system.app, sourceId, 'audiences', { name: 'Listed', definition: { trait: 'a', op: 'exists' }, paused: true });
    const list = await admin(system.app, 'GET', `/sources/${sourceId}/audiences`);
    expect(list.body.audiences.map((a: { id: string }) => a.id)).toContain(audience.id);
    expect((await admin(system.app, 'GET', `/sources/${sourceId}/audiences/${audience.id}`)).body).toMatchObject({ id: audience.id, lastSync: null, pendingSync: null });
    expect((await admin(system.app, 'GET', `/sources/src_other/audiences/${audience.id}`)).status).toBe(404);
    expect((await admin(system.app, 'POST', '/sources/src_missing/audiences', { name: 'x', definition: { trait: 'a', op: 'exists' } })).status).toBe(404);
    const anonymous = await system.app.inject({ method: 'GET', url: `/admin/audiences/${audience.id}` });
    expect(anonymous.statusCode).toBe(401);
  });
});

it('records profiles from every identify, track and alias call (the ingestion side)', async () => {
  const { source, writeKey } = await newSource();
  await ingestBatch(system.app, writeKey, [
    { type: 'identify', anonymousId: 'visitor-1', traits: { theme: 'dark' } },
    { type: 'track', anonymousId: 'visitor-1', event: 'Signed Up', messageId: 'rec-1' },
    { type: 'identify', userId: 'ivy', anonymousId: 'visitor-1', traits: { email: 'ivy@example.test' } },
    { type: 'track', userId: 'ivy', event: 'Order Completed', properties: { total: 3 }, messageId: 'rec-2' },
    { type: 'page', userId: 'ivy', name: 'Home' },
  ]);
  // The same track re-sent (lost acknowledgement) counts once.
  await ingestBatch(system.app, writeKey, [{ type: 'track', userId: 'ivy', event: 'Order Completed', properties: { total: 3 }, messageId: 'rec-2' }]);
  const profile = await system.store.personas.profiles.get(source.id, 'visitor-1');
  expect(profile).toMatchObject({ profileId: 'ivy', userId: 'ivy', traits: { theme: 'dark', email: 'ivy@example.test' }, aliases: ['visitor-1'], eventCount: 2 });
});
