import { WorkflowNotFoundError } from '@temporalio/client';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { deliveryWorkflowId } from '../../src/delivery/ids';
import { deleteNotification } from '../../src/messages/delete-notification';
import { identifierHash } from '../../src/privacy/keyring';
import { waitFor } from '../helpers/processes';
import { ADMIN_TOKEN, decodedWorkflowHistoryText, deliveryResult, send, sourceWithDestination, startSystem, type TestSystem } from '../helpers/system';

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

const postRegulation = (payload: Record<string, unknown>, headers: Record<string, string> = { authorization: `Bearer ${ADMIN_TOKEN}` }) =>
  system.app.inject({ method: 'POST', url: '/admin/regulations', headers, payload });
const deleteUsers = (subjectIds: string[]) => postRegulation({ regulationType: 'DELETE', subjectType: 'USER_ID', subjectIds });

describe('DELETE regulations (seed: Events, delete)', () => {
  it('forwards one delete notification per user to each source that has seen the user and has an enabled destination, and none to disabled ones', async () => {
    const [a, b, off] = receivers;
    const sourceA = await sourceWithDestination(system.store, { sharedSecret: 'k', webhooks: [{ url: a.url, headers: {} }] });
    const sourceB = await sourceWithDestination(system.store, { webhooks: [{ url: b.url, headers: {} }] });
    const sourceOff = await sourceWithDestination(system.store, { enabled: false, webhooks: [{ url: off.url, headers: {} }] });
    // Only sources that have seen a user are told it was deleted.
    for (const { writeKey } of [sourceA, sourceB, sourceOff]) {
      for (const userId of ['gone-1', 'gone-2']) await send(system.app, writeKey, 'identify', { userId, traits: {} });
    }

    const response = await deleteUsers(['gone-1', 'gone-2']);
    expect(response.statusCode).toBe(201);
    const regulation = response.json();
    // The record keeps keyed hashes of the ids, as SwitchyardUserId holds them.
    expect(regulation).toMatchObject({ id: expect.stringMatching(/^reg_/), subjectIds: ['gone-1', 'gone-2'].map((id) => identifierHash(system.keyring!, 'userId', id)) });

    for (const [receiver, { source }] of [[a, sourceA], [b, sourceB]] as const) {
      for (const userId of ['gone-1', 'gone-2']) {
        expect(await deliveryResult(system.client, source.id, deleteNotification(system.keyring, regulation, userId).messageId)).toMatchObject({ ok: true });
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

  it("deletes the user's finished delivery workflows from Temporal, and no one else's", async () => {
    const [receiver] = receivers;
    const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
    await send(system.app, writeKey, 'track', { userId: 'forget-me', event: 'Private', messageId: 'forget-1' });
    await send(system.app, writeKey, 'track', { userId: 'keep-me', event: 'Kept', messageId: 'keep-1' });
    await deliveryResult(system.client, source.id, 'forget-1');
    await deliveryResult(system.client, source.id, 'keep-1');
    // Only "not found" means gone: any other error (a deadline on a loaded box) is no answer, not an absence.
    const exists = (messageId: string) =>
      system.client.workflow.getHandle(deliveryWorkflowId(source.id, messageId)).describe().then(
        () => true,
        (err: unknown) => {
          if (err instanceof WorkflowNotFoundError) return false;
          throw err;
        },
      );
    expect(await exists('forget-1')).toBe(true);

    // Visibility is eventually consistent: the regulation finds what the index shows.
    await waitFor(async () => {
      const { count } = await system.client.workflow.count(`SwitchyardUserId = "${identifierHash(system.keyring!, 'userId', 'forget-me')}"`);
      if (count < 1) throw new Error('not indexed yet');
    }, 60_000);
    const response = await deleteUsers(['forget-me']);
    expect(response.statusCode).toBe(201);
    expect(response.json().deliveriesDeleted).toBe(1);
    // Temporal deletes asynchronously: seconds with the test server's short queue ack interval
    // (test/helpers/global-setup.ts), 30-60 s and more with Temporal's default of 30 s.
    await waitFor(async () => {
      if (await exists('forget-1')) throw new Error('still there');
    }, 120_000);
    expect(await exists('keep-1')).toBe(true);
    const history = await decodedWorkflowHistoryText(system, deliveryWorkflowId(source.id, deleteNotification(system.keyring, response.json(), 'forget-me').messageId));
    expect(history).toContain('"type":"delete"');
  }, 180_000);

  it('validates the regulation: 400 naming the field', async () => {
    const response = await postRegulation({ regulationType: 'SUPPRESS', subjectType: 'USER_ID', subjectIds: ['x'] });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/^regulationType:/) });
  });

  it('needs the admin token', async () => {
    const response = await postRegulation({ regulationType: 'DELETE', subjectType: 'USER_ID', subjectIds: ['x'] }, {});
    expect(response.statusCode).toBe(401);
  });
});

describe('GET /health and GET /admin/status', () => {
  it('/health is 200 {"status":"ok"} with its version only when Temporal and the store answer', async () => {
    const response = await system.app.inject({ method: 'GET', url: '/health' });
    expect(response.statusCode).toBe(200);
    expect(Object.keys(response.json()).sort()).toEqual(['status', 'version']);
    expect(response.json()).toMatchObject({ status: 'ok' });
  });

  it('/health stays 200 when no worker polls the task queue; /admin/status is 503 and says so', async () => {
    const orphan = await startSystem({ temporalTaskQueue: `nobody-polls-${process.pid}` });
    try {
      const health = await orphan.app.inject({ method: 'GET', url: '/health' });
      expect(health.statusCode).toBe(200);
      const status = await orphan.app.inject({ method: 'GET', url: '/admin/status', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      expect(status.statusCode).toBe(503);
      expect(status.json()).toMatchObject({ status: 'degraded', temporal: true, worker: false });
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
