import { startReceiver, type Receiver } from '../helpers/receiver';
import { ADMIN_TOKEN, deliveryResult, sourceWithDestination, startSystem, type TestSystem } from '../helpers/system';

let system: TestSystem;
let receivers: Receiver[];
beforeAll(async () => {
  system = await startSystem();
  receivers = [await startReceiver(), await startReceiver(), await startReceiver()];
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await system.close();
});

describe('DELETE regulations (seed: Events, delete)', () => {
  it('forwards one delete notification per user to each source with an enabled destination, and none to disabled ones', async () => {
    const [a, b, off] = receivers;
    const sourceA = await sourceWithDestination(system.store, { sharedSecret: 'k', webhooks: [{ url: a.url, headers: {} }] });
    const sourceB = await sourceWithDestination(system.store, { webhooks: [{ url: b.url, headers: {} }] });
    await sourceWithDestination(system.store, { enabled: false, webhooks: [{ url: off.url, headers: {} }] });

    const response = await system.app.inject({
      method: 'POST',
      url: '/admin/regulations',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { regulationType: 'DELETE', subjectType: 'USER_ID', subjectIds: ['gone-1', 'gone-2'] },
    });
    expect(response.statusCode).toBe(201);
    const regulation = response.json();
    expect(regulation).toMatchObject({ id: expect.stringMatching(/^reg_/), subjectIds: ['gone-1', 'gone-2'] });

    for (const [receiver, { source }] of [[a, sourceA], [b, sourceB]] as const) {
      for (const userId of ['gone-1', 'gone-2']) {
        expect(await deliveryResult(system.client, source.id, `${regulation.id}:${userId}`)).toMatchObject({ ok: true });
      }
      const bodies = receiver.requests.map((r) => JSON.parse(r.body));
      expect(bodies).toEqual(expect.arrayContaining([
        { type: 'delete', userId: 'gone-1', timestamp: regulation.createdAt },
        { type: 'delete', userId: 'gone-2', timestamp: regulation.createdAt },
      ]));
      expect(bodies.filter((body) => body.type === 'delete' && body.userId.startsWith('gone-'))).toHaveLength(2);
    }
    const signed = a.requests.find((r) => JSON.parse(r.body).userId === 'gone-1')!;
    expect(signed.headers['x-signature']).toMatch(/^[0-9a-f]{40}$/);
    expect(off.requests).toHaveLength(0);
  });

  it('validates the regulation: 400 naming the field', async () => {
    const response = await system.app.inject({
      method: 'POST',
      url: '/admin/regulations',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { regulationType: 'SUPPRESS', subjectType: 'USER_ID', subjectIds: ['x'] },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/^regulationType:/) });
  });

  it('needs the admin token', async () => {
    const response = await system.app.inject({ method: 'POST', url: '/admin/regulations', payload: { regulationType: 'DELETE', subjectType: 'USER_ID', subjectIds: ['x'] } });
    expect(response.statusCode).toBe(401);
  });
});

describe('GET /health', () => {
  it('is 200 {"status":"ok"} when Temporal answers and a worker polls the task queue', async () => {
    const response = await system.app.inject({ method: 'GET', url: '/health' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ status: 'ok', temporal: true, worker: true });
  });

  it('is 503 when no worker polls the task queue', async () => {
    const orphan = await startSystem({ temporalTaskQueue: `nobody-polls-${process.pid}` });
    try {
      const response = await orphan.app.inject({ method: 'GET', url: '/health' });
      expect(response.statusCode).toBe(503);
      expect(response.json()).toMatchObject({ status: 'unavailable', temporal: true, worker: false });
    } finally {
      await orphan.close();
    }
  });
});

describe('GET /openapi.json', () => {
  it('documents every route from the schemas that validate it', async () => {
    const response = await system.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(response.statusCode).toBe(200);
    const document = response.json();
    expect(document.openapi).toMatch(/^3\./);
    for (const route of ['/v1/track', '/v1/batch', '/admin/sources', '/admin/destinations/{id}', '/admin/regulations', '/health']) {
      expect(Object.keys(document.paths)).toContain(route);
    }
    expect(document.paths['/v1/track'].post.requestBody.content['application/json'].schema.properties).toHaveProperty('event');
  });
});
