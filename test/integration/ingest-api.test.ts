import { gzipSync } from 'node:zlib';
import { deliveryWorkflowId } from '../../src/delivery/ids';
import { waitFor } from '../helpers/processes';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { basicAuth, deliveryResult, send, sourceWithDestination, startSystem, type TestSystem } from '../helpers/system';

let system: TestSystem;
let receiver: Receiver;
let writeKey: string;
let sourceId: string;
beforeAll(async () => {
  system = await startSystem();
  receiver = await startReceiver();
  ({ writeKey, source: { id: sourceId } } = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] }));
});
afterAll(async () => {
  await receiver.close();
  await system.close();
});

const post = (url: string, payload: unknown, headers: Record<string, string> = { authorization: basicAuth(writeKey) }) =>
  system.app.inject({ method: 'POST', url, headers, payload: payload as Record<string, unknown> });

const workflowExists = async (messageId: string) => {
  try {
    await system.client.workflow.getHandle(deliveryWorkflowId(sourceId, messageId)).describe();
    return true;
  } catch {
    return false;
  }
};

describe('authentication', () => {
  it('accepts the write key as Basic auth username or as writeKey in the body', async () => {
    expect((await post('/v1/track', { userId: 'u', event: 'E' })).statusCode).toBe(200);
    expect((await post('/v1/track', { userId: 'u', event: 'E', writeKey }, {})).statusCode).toBe(200);
  });

  it('answers 401 with a JSON code for a missing or unknown write key', async () => {
    const missing = await post('/v1/track', { userId: 'u', event: 'E' }, {});
    expect(missing.statusCode).toBe(401);
    expect(missing.json()).toMatchObject({ code: 'unauthorized', message: expect.stringMatching(/write key/) });
    const unknown = await post('/v1/track', { userId: 'u', event: 'E' }, { authorization: basicAuth('not-a-key') });
    expect(unknown.statusCode).toBe(401);
    expect(unknown.body).not.toContain('not-a-key');
  });
});

describe('validation: 400 naming the field and the rule, and nothing is delivered', () => {
  const cases: [string, string, Record<string, unknown>, RegExp][] = [
    ['identify without userId or anonymousId', '/v1/identify', { traits: {} }, /^userId: userId or anonymousId is required/],
    ['track without event', '/v1/track', { userId: 'u' }, /^event: is required/],
    ['group without groupId', '/v1/group', { userId: 'u' }, /^groupId: is required/],
    ['alias without previousId', '/v1/alias', { userId: 'u' }, /^previousId: is required/],
    ['alias without userId', '/v1/alias', { previousId: 'p' }, /^userId: is required/],
    ['page without ids', '/v1/page', { name: 'Home' }, /^userId: userId or anonymousId/],
    ['properties not an object', '/v1/track', { userId: 'u', event: 'E', properties: 'x' }, /^properties: must be object/],
    ['timestamp not ISO 8601', '/v1/track', { userId: 'u', event: 'E', timestamp: 'yesterday' }, /^timestamp: must be an ISO 8601/],
    ['batch sentAt not ISO 8601', '/v1/batch', { sentAt: 'yesterday', batch: [{ type: 'track', userId: 'u', event: 'E', timestamp: '2026-01-01T00:00:00Z' }] }, /^sentAt: must be an ISO 8601/],
    ['batch item originalTimestamp not ISO 8601', '/v1/batch', { batch: [{ type: 'track', userId: 'u', event: 'E' }, { type: 'track', userId: 'u', event: 'E', originalTimestamp: 'now' }] }, /^batch\[1\]\.originalTimestamp: must be an ISO 8601/],
    ['batch item with unknown type', '/v1/batch', { batch: [{ type: 'click', userId: 'u' }] }, /^batch\[0\]\.type: must be equal to one of the allowed values: identify, track/],
    ['batch item breaking a rule', '/v1/batch', { batch: [{ type: 'track', userId: 'u', event: 'ok', messageId: 'never-1' }, { type: 'track', userId: 'u', messageId: 'never-2' }] }, /^batch\[1\]\.event: is required/],
    ['empty batch', '/v1/batch', { batch: [] }, /^batch: must NOT have fewer than 1 items/],
    // As Segment: a preference update must carry the preferences.
    ['Segment Consent Preference Updated without preferences', '/v1/track', { userId: 'u', event: 'Segment Consent Preference Updated', context: { consent: {} } }, /^context\.consent\.categoryPreferences: is required for a track named "Segment Consent Preference Updated"/],
    ['the same inside a batch', '/v1/batch', { batch: [{ type: 'track', userId: 'u', event: 'Segment Consent Preference Updated', messageId: 'never-3' }] }, /^batch\[0\]\.context\.consent\.categoryPreferences: is required/],
  ];
  it.each(cases)('%s', async (_name, url, payload, message) => {
    const response = await post(url, payload);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ code: 'invalid_request', message: expect.stringMatching(message) });
  });

  it('rejects the whole batch when one message is invalid (no workflow starts)', async () => {
    await post('/v1/batch', { batch: [{ type: 'track', userId: 'u', event: 'ok', messageId: 'never-1' }, { type: 'track', userId: 'u', messageId: 'never-2' }] });
    expect(await workflowExists('never-1')).toBe(false);
  });

  it('rejects a message over 32 KB with its size', async () => {
    const response = await post('/v1/track', { userId: 'u', event: 'Big', properties: { blob: 'x'.repeat(33 * 1024) } });
    expect(response.statusCode).toBe(400);
    expect(response.json().message).toMatch(/^message: is 3\d{4} bytes; a message may be at most 32768 bytes/);
  });

  it('rejects a batch request over 500 KB', async () => {
    const batch = Array.from({ length: 20 }, (_, i) => ({ type: 'track', userId: 'u', event: 'E', messageId: `big-${i}`, properties: { blob: 'x'.repeat(30 * 1024) } }));
    const response = await post('/v1/batch', { batch });
    // A 400 with a stable code naming the rule, not the framework's 413.
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ code: 'request_too_large', message: expect.stringMatching(/^body: is larger than 500 KB \(512000 bytes\)/) });
  });

  it('accepts only JSON', async () => {
    const response = await system.app.inject({ method: 'POST', url: '/v1/track', headers: { authorization: basicAuth(writeKey), 'content-type': 'text/xml' }, payload: '<track/>' });
    expect(response.statusCode).toBe(415);
    expect(response.json().code).toBeDefined();
  });
});

describe('accepted messages', () => {
  it('answers 200 {"success":true} only once the workflow exists in Temporal', async () => {
    const response = await post('/v1/track', { userId: 'u', event: 'Durable', messageId: 'durable-1' });
    expect(response.json()).toEqual({ success: true });
    expect(await workflowExists('durable-1')).toBe(true);
  });

  it('fills messageId and stamps receivedAt when the client did not', async () => {
    await post('/v1/identify', { userId: 'filled-id', traits: {} });
    const request = await waitFor(() => {
      const found = receiver.requests.find((r) => JSON.parse(r.body).userId === 'filled-id');
      if (!found) throw new Error('not delivered yet');
      return found;
    }, 30_000);
    const body = JSON.parse(request.body);
    expect(body.messageId).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(body.receivedAt)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('corrects the timestamp for client clock skew: receivedAt - (sentAt - timestamp)', async () => {
    // The client's clock runs one hour fast: it stamped the event 5 s before it sent it.
    const fast = Date.now() + 3_600_000;
    await post('/v1/batch', { sentAt: new Date(fast).toISOString(), batch: [{ type: 'track', userId: 'u', event: 'Skewed', messageId: 'skew-1', timestamp: new Date(fast - 5_000).toISOString() }] });
    const body = JSON.parse((await receiver.waitForMessage('skew-1')).body);
    expect(Date.parse(body.receivedAt) - Date.parse(body.timestamp)).toBe(5_000);
  });

  it('keeps an explicit timestamp without sentAt (historical import via /v1/import)', async () => {
    await post('/v1/import', { batch: [{ type: 'track', userId: 'u', event: 'Old', messageId: 'import-1', timestamp: '2020-01-02T03:04:05.678Z' }] });
    const request = await receiver.waitForMessage('import-1');
    expect(JSON.parse(request.body).timestamp).toBe('2020-01-02T03:04:05.678Z');
  });

  it('accepts gzip request bodies and rejects corrupt gzip with a 400', async () => {
    const payload = gzipSync(JSON.stringify({ userId: 'u', event: 'Zipped', messageId: 'gzip-1' }));
    const ok = await system.app.inject({ method: 'POST', url: '/v1/track', headers: { authorization: basicAuth(writeKey), 'content-type': 'application/json', 'content-encoding': 'gzip' }, payload });
    expect(ok.statusCode).toBe(200);
    expect(await workflowExists('gzip-1')).toBe(true);
    const bad = await system.app.inject({ method: 'POST', url: '/v1/track', headers: { authorization: basicAuth(writeKey), 'content-type': 'application/json', 'content-encoding': 'gzip' }, payload: Buffer.from('not gzip at all') });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: 'invalid_gzip' });
  });

  it('delivers a message re-sent with the same messageId only once', async () => {
    for (let i = 0; i < 3; i++) await send(system.app, writeKey, 'track', { userId: 'u', event: 'Twice', messageId: 'dup-1' });
    await deliveryResult(system.client, sourceId, 'dup-1');
    await send(system.app, writeKey, 'track', { userId: 'u', event: 'Twice', messageId: 'dup-1' });
    await new Promise((r) => setTimeout(r, 1_000));
    expect(receiver.requests.filter((r) => JSON.parse(r.body).messageId === 'dup-1')).toHaveLength(1);
  });
});

describe('integrations object (seed: Selecting destinations)', () => {
  it.each([
    ['Webhooks: false skips the message', { Webhooks: false }, false],
    ['All: false disables it', { All: false }, false],
    ['All: false with Webhooks: true keeps it', { All: false, Webhooks: true }, true],
    ['keys are case sensitive: webhooks: false does not skip', { webhooks: false }, true],
    ['other destinations off does not matter', { Mixpanel: false }, true],
  ])('%s', async (name, integrations, delivered) => {
    const messageId = `integrations-${name.replace(/\W+/g, '-')}`;
    await send(system.app, writeKey, 'track', { userId: 'u', event: 'E', messageId, integrations });
    expect(await workflowExists(messageId)).toBe(delivered);
  });
});
