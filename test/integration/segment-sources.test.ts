import type { AddressInfo } from 'node:net';
import { Analytics } from '@segment/analytics-node';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { ADMIN_TOKEN, basicAuth, deliveryResult, startSystem, type TestSystem } from '../helpers/system';

/**
 * A source moved from Segment keeps its identity: Segment's source shape is accepted, its write key
 * is kept (so a client changes only its host), its labels are kept and filterable, and fields with
 * no meaning here are accepted and named as ignored.
 */
let system: TestSystem;
let receiver: Receiver;
let host: string;
beforeAll(async () => {
  system = await startSystem();
  receiver = await startReceiver();
  await system.app.listen({ port: 0, host: '127.0.0.1' });
  host = `http://127.0.0.1:${(system.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await receiver.close();
  await system.close();
});

const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
const admin = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown) => system.app.inject({ method, url, headers: auth, ...(payload === undefined ? {} : { payload: payload as object }) });
/** A Segment-like write key (32 alphanumerics), unique per call. */
const segmentKey = () => `Sg${Date.now().toString(36)}${Math.random().toString(36).slice(2)}`.padEnd(32, 'x').slice(0, 32);
const track = (writeKey: string, messageId: string) => system.app.inject({ method: 'POST', url: '/v1/track', headers: { authorization: basicAuth(writeKey) }, payload: { userId: 'u1', event: 'Moved', messageId } });

it("keeps a Segment source's write key, slug and labels: @segment/analytics-node sends with the kept key, only the host changes", async () => {
  const writeKey = segmentKey();
  const created = await admin('POST', '/admin/sources', {
    name: 'Web shop (prod)',
    slug: 'web_shop_prod',
    enabled: true,
    labels: [
      { key: 'environment', value: 'prod' },
      { key: 'team', value: 'web', description: 'Web team' },
    ],
    settings: { website: 'https://shop.example.com' },
    metadata: { id: 'IqDTy1TpoU' },
    writeKey,
  });
  expect(created.statusCode).toBe(201);
  const source = created.json();
  expect(source).toMatchObject({
    name: 'Web shop (prod)',
    slug: 'web_shop_prod',
    labels: [
      { key: 'environment', value: 'prod' },
      { key: 'team', value: 'web', description: 'Web team' },
    ],
    writeKey,
    writeKeyHint: writeKey.slice(-4),
    ignoredFields: ['enabled', 'settings', 'metadata'],
  });
  expect((await admin('GET', `/admin/sources/${source.id}`)).json()).toMatchObject({ slug: 'web_shop_prod', labels: source.labels });

  const destination = await admin('POST', `/admin/sources/${source.id}/destinations`, { enabled: true, sharedSecret: 'kept-key-secret', webhooks: [{ url: receiver.url }] });
  expect(destination.statusCode).toBe(201);

  const analytics = new Analytics({ writeKey, host, flushAt: 1, maxRetries: 2 });
  const errors: unknown[] = [];
  analytics.on('error', (err) => errors.push(err));
  analytics.track({ userId: 'moved-user', event: 'Order Completed', properties: { total: 42 }, messageId: 'kept-key-track' });
  await analytics.closeAndFlush({ timeout: 20_000 });
  expect(errors).toEqual([]);
  expect(await deliveryResult(system.client, source.id, 'kept-key-track')).toMatchObject({ ok: true });
  expect(JSON.parse((await receiver.waitForMessage('kept-key-track')).body)).toMatchObject({ event: 'Order Completed', userId: 'moved-user' });
});

it("takes Segment's Public API `writeKeys` list, and a source named by its slug alone", async () => {
  const writeKey = segmentKey();
  const created = await admin('POST', '/admin/sources', { slug: 'http_api_only', writeKeys: [writeKey], workspaceId: 'ws-1' });
  expect(created.statusCode).toBe(201);
  expect(created.json()).toMatchObject({ name: 'http_api_only', slug: 'http_api_only', labels: [], writeKey, ignoredFields: ['workspaceId'] });
  expect((await track(writeKey, 'slug-only-1')).statusCode).toBe(200);
});

it.each([
  ['a write key under 16 characters', { name: 'x', writeKey: 'short-key-123' }, 'writeKey: must NOT have fewer than 16 characters'],
  ['a write key with a colon', { name: 'x', writeKey: 'abcdefgh:ijklmnop' }, 'writeKey: must match pattern'],
  ['a write key with a space', { name: 'x', writeKey: 'abcdefgh ijklmnop' }, 'writeKey: must match pattern'],
  ['two write keys', { name: 'x', writeKeys: ['abcdefghijklmnop1', 'abcdefghijklmnop2'] }, 'writeKeys: must NOT have more than 1 items'],
  ['writeKey and writeKeys', { name: 'x', writeKey: 'abcdefghijklmnop1', writeKeys: ['abcdefghijklmnop2'] }, 'writeKeys: give writeKey or writeKeys, not both'],
  ['neither name nor slug', { labels: [] }, 'name: is required'],
  ['a label without a value', { name: 'x', labels: [{ key: 'environment' }] }, 'labels[0].value: is required'],
  ['an unknown field', { name: 'x', colour: 'red' }, 'colour: is not a known field'],
])('refuses %s, naming the field and the rule', async (_, body, message) => {
  const reply = await admin('POST', '/admin/sources', body);
  expect(reply.statusCode).toBe(400);
  expect(reply.json().message).toContain(message);
});

it('refuses a write key another source has (409, naming writeKey), on create and on change', async () => {
  const writeKey = segmentKey();
  const first = (await admin('POST', '/admin/sources', { name: 'first', writeKey })).json();
  const again = await admin('POST', '/admin/sources', { name: 'second', writeKey });
  expect(again.statusCode).toBe(409);
  expect(again.json().message).toBe('writeKey: another source already has this write key');
  const other = (await admin('POST', '/admin/sources', { name: 'other' })).json();
  const changed = await admin('PATCH', `/admin/sources/${other.id}`, { writeKey });
  expect(changed.statusCode).toBe(409);
  expect(changed.json().message).toContain('writeKey');
  // Setting a source's own key again is no conflict.
  expect((await admin('PATCH', `/admin/sources/${first.id}`, { writeKey })).statusCode).toBe(200);
});

it('changes labels, slug and the write key with PATCH: the old key stops working at once, the new one works', async () => {
  const oldKey = segmentKey();
  const source = (await admin('POST', '/admin/sources', { name: 'to change', writeKey: oldKey })).json();
  expect((await track(oldKey, 'patch-before')).statusCode).toBe(200);
  const newKey = segmentKey();
  const changed = await admin('PATCH', `/admin/sources/${source.id}`, { slug: 'changed', labels: [{ key: 'environment', value: 'staging' }], writeKey: newKey, enabled: false });
  expect(changed.statusCode).toBe(200);
  expect(changed.json()).toMatchObject({ name: 'to change', slug: 'changed', labels: [{ key: 'environment', value: 'staging' }], writeKeyHint: newKey.slice(-4), ignoredFields: ['enabled'] });
  expect(changed.json()).not.toHaveProperty('writeKey');
  expect((await track(oldKey, 'patch-old')).statusCode).toBe(401);
  expect((await track(newKey, 'patch-new')).statusCode).toBe(200);
  expect((await admin('PATCH', '/admin/sources/src_missing', { name: 'x' })).statusCode).toBe(404);
  expect((await admin('PATCH', `/admin/sources/${source.id}`, {})).statusCode).toBe(400);
});

it('lists sources by label: ?label=key:value, repeated means all of them', async () => {
  const tag = `run-${Date.now()}`;
  const prod = (
    await admin('POST', '/admin/sources', {
      name: 'p',
      labels: [
        { key: 'environment', value: 'prod' },
        { key: 'run', value: tag },
      ],
    })
  ).json();
  const staging = (
    await admin('POST', '/admin/sources', {
      name: 's',
      labels: [
        { key: 'environment', value: 'staging' },
        { key: 'run', value: tag },
      ],
    })
  ).json();
  const ids = async (query: string) => ((await admin('GET', `/admin/sources?${query}`)).json().sources as Array<{ id: string }>).map((s) => s.id);
  expect(await ids(`label=run:${tag}`)).toEqual([prod.id, staging.id]);
  expect(await ids(`label=run:${tag}&label=environment:prod`)).toEqual([prod.id]);
  expect(await ids(`label=run:${tag}&label=environment:dev`)).toEqual([]);
  const bad = await admin('GET', '/admin/sources?label=environment');
  expect(bad.statusCode).toBe(400);
  expect(bad.json().message).toContain('label: "environment" is not key:value');
});
