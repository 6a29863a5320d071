import { ScheduleNotFoundError } from '@temporalio/client';
import { admin, createDefinition, ingestBatch, NEVER } from '../helpers/personas';
import { describePersonasSyncRules } from '../helpers/personas-sync-cases';
import type { Receiver } from '../helpers/receiver';
import { sourceWithDestination, type TestSystem, useSystem } from '../helpers/system';

let system: TestSystem;
let receiver: Receiver;
useSystem((s, r) => {
  system = s;
  receiver = r;
});

async function newSource(sharedSecret?: string) {
  return sourceWithDestination(system.store, { sharedSecret, webhooks: [{ url: receiver.url, headers: {} }] });
}

describePersonasSyncRules(() => ({ system, receiver }));

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
