import { createHmac } from 'node:crypto';
import { deliveryWorkflowId } from '../../src/delivery/ids';
import { identifierHash } from '../../src/privacy/keyring';
import { MESSAGE_TYPE, SOURCE, STATUS, USER_ID } from '../../src/workflows/search-attributes';
import type { Receiver } from '../helpers/receiver';
import { decodedWorkflowHistoryText, deliveryResult, send, sourceWithDestination, type TestSystem, useSystem } from '../helpers/system';

let system: TestSystem;
let receiver: Receiver;
useSystem((s, r) => {
  system = s;
  receiver = r;
});
beforeEach(() => receiver.requests.splice(0));

/** Sends one call and returns the single request the receiver got for it. */
async function deliverOne(writeKey: string, sourceId: string, type: string, body: Record<string, unknown>) {
  await send(system.app, writeKey, type, body);
  const result = await deliveryResult(system.client, sourceId, body.messageId as string);
  expect(result).toMatchObject({ ok: true });
  const requests = receiver.requests.filter((r) => JSON.parse(r.body).messageId === body.messageId);
  expect(requests).toHaveLength(1);
  return requests[0];
}

describe('the request sent to a webhook URL', () => {
  it('is signed with X-Signature that a receiver verifies with the documented recipe', async () => {
    const { source, writeKey } = await sourceWithDestination(system.store, { sharedSecret: 'sh4red-s3cret', webhooks: [{ url: receiver.url, headers: {} }] });
    const request = await deliverOne(writeKey, source.id, 'track', { userId: 'u1', event: 'Order Completed', messageId: 'sig-1', properties: { total: 5, note: 'héllo ✓' } });
    // Recipe (docs/api.md): HMAC-SHA1 over the parsed body re-serialized as JSON, lowercase hex.
    const expected = createHmac('sha1', 'sh4red-s3cret').update(JSON.stringify(JSON.parse(request.body)), 'utf8').digest('hex');
    expect(request.headers['x-signature']).toBe(expected);
    expect(request.headers['x-signature']).toMatch(/^[0-9a-f]{40}$/);
    // The bytes on the wire are exactly JSON.stringify of the parsed body.
    expect(request.body).toBe(JSON.stringify(JSON.parse(request.body)));
  });

  it('carries no X-Signature when the destination has no shared secret', async () => {
    const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
    const request = await deliverOne(writeKey, source.id, 'identify', { userId: 'u2', messageId: 'nosig-1', traits: { plan: 'pro' } });
    expect(request.headers['x-signature']).toBeUndefined();
  });

  it('is a POST with Content-Type application/json, User-Agent Switchyard/1.0 and the static headers', async () => {
    const { source, writeKey } = await sourceWithDestination(system.store, {
      webhooks: [{ url: `${receiver.url}?team=a`, headers: { 'X-Team': 'analytics', Authorization: 'Bearer hook-token-123' } }],
    });
    const request = await deliverOne(writeKey, source.id, 'page', { userId: 'u3', messageId: 'hdr-1', properties: { path: '/' } });
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/hook?team=a');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['user-agent']).toBe('Switchyard/1.0');
    expect(request.headers['x-team']).toBe('analytics');
    expect(request.headers.authorization).toBe('Bearer hook-token-123');
  });

  it('keeps the shared secret and header values out of workflow history', async () => {
    const { source, writeKey } = await sourceWithDestination(system.store, {
      sharedSecret: 'never-in-history-secret',
      webhooks: [{ url: receiver.url, headers: { 'X-Api-Key': 'never-in-history-header' } }],
    });
    await deliverOne(writeKey, source.id, 'track', { userId: 'u4', event: 'Signed Up', messageId: 'hist-1' });
    // Read as an operator would, decrypted through the codec server: secrets are not in history at all.
    const history = await decodedWorkflowHistoryText(system, deliveryWorkflowId(source.id, 'hist-1'));
    expect(history).toContain('Signed Up'); // the decoded payloads are really searched
    expect(history).not.toContain('never-in-history-secret');
    expect(history).not.toContain('never-in-history-header');
    expect(history).not.toContain(writeKey);
  });

  it('is findable in Temporal by source, type, user and status search attributes', async () => {
    const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
    await deliverOne(writeKey, source.id, 'track', { userId: 'u5', event: 'Viewed', messageId: 'sa-1' });
    const description = await system.client.workflow.getHandle(deliveryWorkflowId(source.id, 'sa-1')).describe();
    const attrs = description.typedSearchAttributes;
    // A delivery that succeeded writes no last status: it stays `delivering` on the completed run.
    expect([attrs.get(SOURCE), attrs.get(MESSAGE_TYPE), attrs.get(USER_ID), attrs.get(STATUS)]).toEqual([source.id, 'track', identifierHash(system.keyring!, 'userId', 'u5'), 'delivering']);
    // docs/operations.md's Web UI query for delivered deliveries, as an operator types it.
    const delivered = '(SwitchyardStatus = "delivered" OR (ExecutionStatus = "Completed" AND SwitchyardStatus IN ("delivering", "retrying")))';
    const count = async (query: string) => (await system.client.workflow.count(`SwitchyardSource = "${source.id}" AND ${query}`)).count;
    for (let tries = 0; (await count(delivered)) !== 1 && tries < 40; tries++) await new Promise((wake) => setTimeout(wake, 250));
    expect(await count(delivered)).toBe(1);
    expect(await count('SwitchyardStatus = "delivering" AND ExecutionStatus = "Running"')).toBe(0);
  });
});

describe('the body of every message type (seed: Message bodies)', () => {
  const context = { device: { model: 'Pixel', type: 'android' }, os: { name: 'Android', version: '14' }, app: { build: '7', name: 'Shop', version: '1.2' }, ip: '203.0.113.9' };
  const cases: [string, Record<string, unknown>, Record<string, unknown>][] = [
    ['page', { userId: 'u', name: 'Home', properties: { path: '/', referrer: '', title: 'Home', url: 'https://x.test/' } }, { properties: { path: '/', referrer: '', title: 'Home', url: 'https://x.test/' } }],
    ['screen', { userId: 'u', name: 'Checkout', context }, { name: 'Checkout', context }],
    ['identify', { userId: 'u', traits: { email: 'a@b.test', plan: 'Premium' } }, { traits: { email: 'a@b.test', plan: 'Premium' } }],
    ['track', { userId: 'u', event: 'Order Completed', properties: { total: 42 } }, { event: 'Order Completed', properties: { total: 42 } }],
    ['group', { userId: 'u', groupId: 'g1', traits: { name: 'Acme' } }, { groupId: 'g1', traits: { name: 'Acme' } }],
    ['alias', { userId: 'new-id', previousId: 'old-id' }, { 'Previous ID': 'old-id', 'User ID': 'new-id', previousId: 'old-id', userId: 'new-id' }],
  ];

  it.each(cases)('%s', async (type, call, expected) => {
    const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
    const messageId = `shape-${type}`;
    const request = await deliverOne(writeKey, source.id, type, { ...call, messageId, timestamp: '2026-03-01T10:00:00Z' });
    const body = JSON.parse(request.body);
    expect(body).toMatchObject({ version: 1, type, messageId, timestamp: '2026-03-01T10:00:00.000Z', ...expected });
    expect(body.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(typeof body.context).toBe('object');
    if (type !== 'alias') expect(body.userId).toBe('u');
  });
});
