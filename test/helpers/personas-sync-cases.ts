import { createHmac } from 'node:crypto';
import { deliveryWorkflowId } from '../../src/delivery/ids';
import { admin, createDefinition, expectMessages, ingestBatch, NEVER, syncNow, valuesByUser } from './personas';
import type { Receiver } from './receiver';
import { sourceWithDestination, type TestSystem } from './system';

/**
 * The Personas sync rules end to end (ingest → profiles → a sync workflow → signed identify calls
 * at a receiver), shared by the SQLite run (test/integration/personas-sync.test.ts, the run's
 * worker) and the PostgreSQL run (personas-sync-postgres.test.ts, its own worker and database).
 * `context` gives the started system and receiver (ready by the time the tests run).
 */
export function describePersonasSyncRules(context: () => { system: TestSystem; receiver: Receiver }): void {
  let system: TestSystem;
  let receiver: Receiver;
  beforeAll(() => {
    ({ system, receiver } = context());
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
}
