import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { openStore, type Store } from '../../src/store';
import { auth, buildAdminApp } from '../helpers/admin-app';
import { createTestDatabase } from '../helpers/postgres';

/** Destination filters and transformations in Segment's Public API shape, saved in a real store on both dialects. */

const dialects: [string, () => Promise<{ store: Store; cleanUp: () => void }>][] = [
  [
    'SQLite',
    async () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-filters-'));
      return { store: await openStore({ databasePath: path.join(dir, 'switchyard.db') }), cleanUp: () => rmSync(dir, { recursive: true, force: true }) };
    },
  ],
  [
    'PostgreSQL',
    async () => ({ store: await openStore({ databasePath: '', databaseUrl: await createTestDatabase('switchyard_filters') }), cleanUp: () => undefined }),
  ],
];

const dropPii = {
  title: 'No PII',
  description: 'Drop emails and IPs',
  enabled: true,
  if: 'all',
  actions: [{ type: 'DROP_PROPERTIES', fields: { properties: ['email'], context: ['ip'] } }],
};
const onlySignups = { title: 'Only sign-ups', enabled: true, if: "!(event = 'Signed Up')", actions: [{ type: 'DROP' }] };
const order = { type: 'track', messageId: 'msg-1', userId: 'u1', event: 'Order Completed', properties: { total: 3, email: 'a@example.com' }, context: { ip: '203.0.113.7' } };

describe.each(dialects)('destination filters API on %s', (_name, open) => {
  let store: Store;
  let cleanUp: () => void;
  let app: FastifyInstance;
  let destinationId: string;

  beforeAll(async () => {
    ({ store, cleanUp } = await open());
    app = await buildAdminApp(store);
    const { source } = await store.sources.create('Web shop');
    destinationId = (await store.destinations.create(source.id, { name: 'Ads', enabled: true, webhooks: [{ url: 'https://hooks.example.com/a', headers: {} }] })).id;
  });
  afterAll(async () => {
    await app?.close();
    await store?.close();
    cleanUp?.();
  });

  const request = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
    app.inject({ method, url: `/admin/destinations/${destinationId}${url}`, headers: auth, ...(payload === undefined ? {} : { payload: payload as object }) });

  afterEach(async () => {
    for (const filter of await store.destinationFilters.list(destinationId)) await store.destinationFilters.delete(destinationId, filter.id);
  });

  it('creates, lists, reads, changes and deletes a filter in the shape Segment\'s Public API takes', async () => {
    const created = await request('POST', '/filters', dropPii);
    expect(created.statusCode).toBe(201);
    const filter = created.json<{ id: string }>();
    expect(filter).toMatchObject({ ...dropPii, destinationId, id: expect.stringMatching(/^flt_/) });

    expect((await request('GET', '/filters')).json()).toEqual({ filters: [filter] });
    expect((await request('GET', `/filters/${filter.id}`)).json()).toEqual(filter);

    const patched = await request('PATCH', `/filters/${filter.id}`, { enabled: false });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({ ...dropPii, enabled: false });

    expect((await request('DELETE', `/filters/${filter.id}`)).statusCode).toBe(204);
    expect((await request('GET', `/filters/${filter.id}`)).statusCode).toBe(404);
    expect((await request('DELETE', `/filters/${filter.id}`)).statusCode).toBe(404);
  });

  it('answers 404 for a destination that does not exist', async () => {
    const res = await app.inject({ method: 'GET', url: '/admin/destinations/dst_missing/filters', headers: auth });
    expect(res.statusCode).toBe(404);
  });

  it('is behind the admin token', async () => {
    const res = await app.inject({ method: 'GET', url: `/admin/destinations/${destinationId}/filters` });
    expect(res.statusCode).toBe(401);
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    ['an if that does not parse, naming the column', { if: "event = 'X' and" }, /^if: at column 16: /],
    ['an unknown function', { if: "uppercase(event) = 'X'" }, /^if: at column 1: uppercase\(\) /],
    ['an unknown action', { actions: [{ type: 'HASH' }] }, /^actions\[0\]\.type: is one of SAMPLE, DROP, DROP_PROPERTIES, ALLOW_PROPERTIES$/],
    ['a percent out of range', { actions: [{ type: 'SAMPLE', percent: 2 }] }, /^actions\[0\]\.percent: is a number from 0 to 1$/],
    ['fields that are not lists of keys', { actions: [{ type: 'ALLOW_PROPERTIES', fields: { properties: 'email' } }] }, /^actions\[0\]\.fields: /],
    ['a missing title', { title: undefined }, /^title: is required$/],
  ])('refuses %s with a 400 naming the field', async (_, change, message) => {
    const res = await request('POST', '/filters', { ...dropPii, ...change });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(message) });
  });

  it('refuses a PATCH that would break the filter, and keeps it as it was', async () => {
    const { id } = (await request('POST', '/filters', dropPii)).json<{ id: string }>();
    const res = await request('PATCH', `/filters/${id}`, { if: 'event = ' });
    expect(res.statusCode).toBe(400);
    expect(res.json<{ message: string }>().message).toMatch(/^if: at column 9: /);
    expect((await request('GET', `/filters/${id}`)).json()).toMatchObject(dropPii);
  });

  it('takes at most 10 filters per destination', async () => {
    for (let n = 0; n < 10; n++) expect((await request('POST', '/filters', { ...dropPii, title: `Filter ${n}` })).statusCode).toBe(201);
    const res = await request('POST', '/filters', dropPii);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ code: 'invalid_request', message: 'filters: a destination has at most 10' });
    expect((await request('GET', '/filters')).json<{ filters: unknown[] }>().filters).toHaveLength(10);
  });

  it('previews what the destination would be sent under its saved filters', async () => {
    await request('POST', '/filters', dropPii);
    await request('POST', '/filters', { ...onlySignups, enabled: false });
    const res = await request('POST', '/filters/preview', { event: order });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ delivered: true, body: { ...order, properties: { total: 3 }, context: {} }, matched: ['No PII'], filter: null });

    const onlySignupsOn = (await request('GET', '/filters')).json<{ filters: { id: string; title: string }[] }>().filters.find((f) => f.title === onlySignups.title)!;
    await request('PATCH', `/filters/${onlySignupsOn.id}`, { enabled: true });
    expect((await request('POST', '/filters/preview', { event: order })).json()).toEqual({
      delivered: false,
      body: null,
      matched: ['No PII', 'Only sign-ups'],
      filter: { id: onlySignupsOn.id, title: 'Only sign-ups', reason: 'filters' },
    });
  });

  it('names the filter that sampled the event out, for a saved filter and a draft', async () => {
    const saved = (await request('POST', '/filters', { title: 'Keep none', enabled: true, if: 'all', actions: [{ type: 'SAMPLE', percent: 0 }] })).json<{ id: string }>();
    expect((await request('POST', '/filters/preview', { event: order })).json()).toMatchObject({ delivered: false, filter: { id: saved.id, title: 'Keep none', reason: 'sampled' } });
    const draft = await request('POST', '/filters/preview', { event: order, filter: { title: 'Draft sample', enabled: true, if: 'all', actions: [{ type: 'SAMPLE', percent: 0 }] } });
    expect(draft.json()).toMatchObject({ delivered: false, filter: { id: null, title: 'Draft sample', reason: 'sampled' } });
  });

  it('previews one draft filter, without saving it', async () => {
    const res = await request('POST', '/filters/preview', { event: order, filter: { ...onlySignups, enabled: false } });
    expect(res.json()).toEqual({ delivered: false, body: null, matched: ['Only sign-ups'], filter: { id: null, title: 'Only sign-ups', reason: 'filters' } });
    const bad = await request('POST', '/filters/preview', { event: order, filter: { ...onlySignups, if: '!(' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json<{ message: string }>().message).toMatch(/^filter\.if: at column 3: /);
    expect((await request('GET', '/filters')).json()).toEqual({ filters: [] });
  });

  describe('transformations (Segment Protocols, Public API and Terraform shape)', () => {
    const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
      app.inject({ method, url: `/admin/transformations${url}`, headers: auth, ...(payload === undefined ? {} : { payload: payload as object }) });
    const renameOrder = (sourceId: string) => ({
      sourceId,
      name: 'Rename order id',
      enabled: true,
      if: "event = 'Order Completed'",
      newEventName: 'Purchase',
      propertyRenames: [{ oldName: 'order_id', newName: 'orderId' }],
    });

    it('creates, lists, reads, changes and deletes one; a Terraform segment_transformation body is the same object, and GET saves back unchanged', async () => {
      const { source } = await store.sources.create('Transformed');
      const created = await call('POST', '', renameOrder(source.id));
      expect(created.statusCode).toBe(201);
      const saved = created.json<{ id: string }>();
      expect(saved).toMatchObject({ ...renameOrder(source.id), destinationMetadataId: null, id: expect.stringMatching(/^tfm_/) });
      expect((await call('GET', `?sourceId=${source.id}`)).json()).toEqual({ transformations: [saved] });
      expect((await call('PATCH', `/${saved.id}`, saved)).json()).toMatchObject({ ...saved, updatedAt: expect.any(String) });

      const terraform = {
        name: 'Set currency',
        enabled: true,
        source_id: source.id,
        destination_metadata_id: '614a3c7d791c91c41bae7599',
        if: "type = 'track'",
        new_event_name: null,
        property_renames: [],
        property_value_transformations: [{ property_paths: ['properties.currency'], property_value: 'USD' }],
        fql_defined_properties: [],
      };
      const fromTerraform = await call('POST', '', terraform);
      expect(fromTerraform.statusCode).toBe(201);
      expect(fromTerraform.json()).toMatchObject({ destinationMetadataId: '614a3c7d791c91c41bae7599', propertyValueTransformations: [{ propertyPaths: ['properties.currency'], propertyValue: 'USD' }] });
      expect(fromTerraform.json()).not.toHaveProperty('newEventName');

      const off = await call('PATCH', `/${saved.id}`, { enabled: false, new_event_name: null });
      expect(off.json()).toMatchObject({ enabled: false, propertyRenames: [{ oldName: 'order_id', newName: 'orderId' }] });
      expect(off.json()).not.toHaveProperty('newEventName');
      expect((await call('DELETE', `/${saved.id}`)).statusCode).toBe(204);
      expect((await call('GET', `/${saved.id}`)).statusCode).toBe(404);
      await call('DELETE', `/${fromTerraform.json<{ id: string }>().id}`);
    });

    it.each<[string, Record<string, unknown>, number, RegExp]>([
      ['an if that does not parse, naming the column', { if: "event = 'X' and" }, 400, /^if: at column 16: /],
      ['renames beside an FQL-defined property', { fqlDefinedProperties: [{ fql: 'lowercase(event)', propertyName: 'properties.e' }] }, 400, /^fqlDefinedProperties: cannot be combined/],
      ['a path renamed and set', { propertyValueTransformations: [{ propertyPaths: ['properties.orderId'], propertyValue: 'x' }] }, 400, /^propertyValueTransformations\[0\]\.propertyPaths\[0\]: "properties.orderId" is also renamed/],
      ['an unknown source', { sourceId: 'src_missing' }, 400, /^sourceId: source src_missing not found/],
      ['a catalog destination Switchyard has none of', { destinationMetadataId: '54521fdc25e721e32a72ef99' }, 422, /^destinationMetadataId: 54521fdc25e721e32a72ef99 is a Segment catalog destination/],
      ['property hashing', { hashPropertiesConfiguration: { algorithm: 'MD5', paths: ['properties.email'] } }, 400, /^hashPropertiesConfiguration: hashing properties is not supported/],
    ])('refuses %s, naming the field and the rule', async (_, change, status, message) => {
      const { source } = await store.sources.create('Refused');
      const res = await call('POST', '', { ...renameOrder(source.id), ...change });
      expect(res.statusCode).toBe(status);
      expect(res.json<{ message: string }>().message).toMatch(message);
      expect(await store.transformations.list(source.id)).toEqual([]);
    });

    it('previews a transformation on an event without saving it: the event as transformed, or that it is dropped', async () => {
      const { source } = await store.sources.create('Previewed');
      const event = { ...order, event: 'Order Completed', properties: { order_id: 'o-1', total: 3 } };
      const res = await call('POST', '/preview', { event, transformation: renameOrder(source.id) });
      expect(res.json()).toEqual({ matched: true, dropped: false, changed: true, event: { ...event, event: 'Purchase', properties: { orderId: 'o-1', total: 3 } } });
      const dropped = await call('POST', '/preview', { event, transformation: { name: 'Drop orders', if: "event = 'Order Completed'", drop: true } });
      expect(dropped.json()).toEqual({ matched: true, dropped: true, changed: false, event: null });
      const bad = await call('POST', '/preview', { event, transformation: { name: 'x', if: '!(', drop: true } });
      expect(bad.statusCode).toBe(400);
      expect(bad.json<{ message: string }>().message).toMatch(/^transformation\.if: at column 3: /);
      expect(await store.transformations.list(source.id)).toEqual([]);
    });
  });

  it('goes when its destination is deleted', async () => {
    const { source } = await store.sources.create('Other');
    const other = await store.destinations.create(source.id, { name: 'Other', enabled: true, webhooks: [{ url: 'https://hooks.example.com/b', headers: {} }] });
    await app.inject({ method: 'POST', url: `/admin/destinations/${other.id}/filters`, headers: auth, payload: dropPii });
    await store.destinations.delete(other.id);
    expect(await store.destinationFilters.list(other.id)).toEqual([]);
  });
});
