import { deliveryWorkflowId } from '../../src/delivery/ids';
import { SUPPRESSED_REASON } from '../../src/delivery/suppression';
import { deleteNotification } from '../../src/messages/delete-notification';
import { identifierHash } from '../../src/privacy/keyring';
import { startLateDelivery } from '../helpers/late-delivery';
import { waitFor } from '../helpers/processes';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { ADMIN_TOKEN, deliveryResult, send, sourceWithDestination, useSystem, type TestSystem } from '../helpers/system';

/**
 * Suppression: Segment's SUPPRESS_ONLY, UNSUPPRESS and SUPPRESS_WITH_DELETE on the real
 * API, a real Temporal server and worker, and real receivers.
 */
let system: TestSystem;
let receiver: Receiver;
const others: Receiver[] = [];
useSystem((s, r) => ((system = s), (receiver = r)), { alsoClose: others });

const unique = (name: string) => `${name}-${process.pid}-${Date.now().toString(36)}`;
const regulate = (regulationType: string, subjectIds: string[]) =>
  system.app.inject({ method: 'POST', url: '/admin/regulations', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: { regulationType, subjectType: 'USER_ID', subjectIds } });
const requestsFor = (r: Receiver, messageId: string) => r.requests.filter((request) => (JSON.parse(request.body) as { messageId?: string }).messageId === messageId);
const hashed = (id: string) => identifierHash(system.keyring!, 'userId', id);
const workflowExists = (sourceId: string, messageId: string) =>
  system.client.workflow.getHandle(deliveryWorkflowId(sourceId, messageId)).describe().then(() => true, () => false);

/** Past the longest backoff (FAST_DELIVERY: 1 s): a delivery that was going to come back has. */
const pastLongestBackoff = () => new Promise((resolve) => setTimeout(resolve, 3_000));

describe('SUPPRESS_ONLY', () => {
  it("answers the user's later calls 200 but delivers nothing, starts no workflow and records no profile; other users go on", async () => {
    const userId = unique('suppressed');
    const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
    const response = await regulate('SUPPRESS_ONLY', [userId]);
    expect(response.statusCode).toBe(201);
    expect(response.json()).toMatchObject({ regulationType: 'SUPPRESS_ONLY', subjectIds: [hashed(userId)], deliveriesStopped: 0 });
    expect(response.json()).not.toHaveProperty('notifications');

    const trackId = unique('track');
    const identifyId = unique('identify');
    await send(system.app, writeKey, 'track', { userId, event: 'Private', messageId: trackId });
    await send(system.app, writeKey, 'identify', { userId, traits: { plan: 'pro' }, messageId: identifyId });
    // In a batch beside another user's call: only the suppressed user's call is set aside.
    const otherUser = unique('other-user');
    const otherId = unique('other');
    const batchMineId = unique('batch-mine');
    const batch = await system.app.inject({
      method: 'POST',
      url: '/v1/batch',
      headers: { authorization: `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}` },
      payload: { batch: [{ type: 'track', userId, event: 'In batch', messageId: batchMineId }, { type: 'track', userId: otherUser, event: 'Fine', messageId: otherId }] },
    });
    expect(batch.statusCode).toBe(200);

    expect(await deliveryResult(system.client, source.id, otherId)).toMatchObject({ ok: true, report: { destinations: [{ status: 'delivered' }] } });
    for (const messageId of [trackId, identifyId, batchMineId]) {
      expect(await workflowExists(source.id, messageId)).toBe(false);
      expect(requestsFor(receiver, messageId)).toEqual([]);
    }
    expect(await system.store.personas.profiles.get(source.id, userId)).toBeUndefined();
    expect(await system.store.sourceUsers.sourcesThatSaw([userId])).toEqual(new Map());
    expect(await system.store.personas.profiles.get(source.id, otherUser)).toBeDefined();
  });

  it("stops the user's delivery retrying against a failing receiver", async () => {
    const userId = unique('retrying');
    const failing = await startReceiver(() => ({ status: 500 }));
    others.push(failing);
    const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: failing.url, headers: {} }] });
    const trackId = unique('track');
    await send(system.app, writeKey, 'track', { userId, event: 'Retried', messageId: trackId });
    await waitFor(async () => {
      if (requestsFor(failing, trackId).length < 2) throw new Error('not retried yet');
    }, 30_000);

    const response = await regulate('SUPPRESS_ONLY', [userId]);
    expect(response.statusCode).toBe(201);
    failing.respond(() => ({ status: 200 }));
    const recoveredAt = Date.now();
    // Stopped, by the regulation's terminate (when visibility showed the run) or at its next attempt.
    await waitFor(async () => {
      const { status } = await system.client.workflow.getHandle(deliveryWorkflowId(source.id, trackId)).describe();
      if (status.name === 'RUNNING') throw new Error('still running');
    }, 15_000);
    await pastLongestBackoff();
    expect(requestsFor(failing, trackId).filter((r) => r.at >= recoveredAt)).toEqual([]);
  });

  it('an attempt of a message accepted before the suppression sends nothing, even when its workflow started after it', async () => {
    // What a call that passed the ingest check just before the regulation looks like: only the
    // send-time check stands between it and the receiver.
    const userId = unique('late-start');
    const { source } = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
    const acceptedAt = new Date().toISOString();
    expect((await regulate('SUPPRESS_ONLY', [userId])).statusCode).toBe(201);

    const lateId = unique('late');
    await startLateDelivery(system, source.id, userId, lateId, acceptedAt);
    expect(await deliveryResult(system.client, source.id, lateId)).toMatchObject({ ok: true, report: { destinations: [{ status: 'stopped' }] } });
    expect(requestsFor(receiver, lateId)).toEqual([]);
    expect(SUPPRESSED_REASON).not.toContain(userId);
  });
});

describe('UNSUPPRESS', () => {
  it("delivers and records the user's new calls again; a delivery stopped by the suppression stays stopped", async () => {
    const userId = unique('comeback');
    const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
    expect((await regulate('SUPPRESS_ONLY', [userId])).statusCode).toBe(201);
    const whileSuppressed = unique('while');
    await send(system.app, writeKey, 'track', { userId, event: 'Hidden', messageId: whileSuppressed });

    const response = await regulate('UNSUPPRESS', [userId]);
    expect(response.statusCode).toBe(201);
    expect(response.json()).toEqual({ id: expect.stringMatching(/^reg_/), regulationType: 'UNSUPPRESS', subjectType: 'USER_ID', subjectIds: [hashed(userId)], createdAt: expect.any(String) });

    const after = unique('after');
    await send(system.app, writeKey, 'identify', { userId, traits: { plan: 'back' }, messageId: after });
    expect(await deliveryResult(system.client, source.id, after)).toMatchObject({ ok: true, report: { destinations: [{ status: 'delivered' }] } });
    expect(requestsFor(receiver, after)).toHaveLength(1);
    expect(await system.store.personas.profiles.get(source.id, userId)).toMatchObject({ traits: { plan: 'back' } });
    // The call made while suppressed is not delivered late.
    expect(await workflowExists(source.id, whileSuppressed)).toBe(false);
  });
});

describe('SUPPRESS_WITH_DELETE', () => {
  it("erases the user as a DELETE does (notification, profile, running deliveries) and suppresses their later calls", async () => {
    const userId = unique('both');
    const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
    const before = unique('before');
    await send(system.app, writeKey, 'identify', { userId, traits: { plan: 'pro' }, messageId: before });
    expect(await deliveryResult(system.client, source.id, before)).toMatchObject({ ok: true });
    expect(await system.store.personas.profiles.get(source.id, userId)).toBeDefined();

    const response = await regulate('SUPPRESS_WITH_DELETE', [userId]);
    expect(response.statusCode).toBe(201);
    const regulation = response.json();
    expect(regulation).toMatchObject({ regulationType: 'SUPPRESS_WITH_DELETE', notifications: 1, deliveriesStopped: 0 });
    const notificationId = deleteNotification(system.keyring, regulation, userId).messageId;
    expect(await deliveryResult(system.client, source.id, notificationId)).toMatchObject({ ok: true, report: { destinations: [{ status: 'delivered' }] } });
    // The notification body is Segment's delete: no messageId, so found by its user.
    const deletes = receiver.requests.map((r) => JSON.parse(r.body) as Record<string, unknown>).filter((body) => body.type === 'delete' && body.userId === userId);
    expect(deletes).toEqual([{ type: 'delete', userId, timestamp: regulation.createdAt }]);
    expect(await system.store.personas.profiles.get(source.id, userId)).toBeUndefined();

    // Unlike a DELETE, the user does not come back with their next call.
    const later = unique('later');
    await send(system.app, writeKey, 'track', { userId, event: 'Later', messageId: later });
    expect(await workflowExists(source.id, later)).toBe(false);
    expect(await system.store.personas.profiles.get(source.id, userId)).toBeUndefined();
  });
});

describe('the regulation list', () => {
  it('shows each regulation with its type, newest first; DELETE stays accepted', async () => {
    const userId = unique('listed');
    const ids: string[] = [];
    for (const type of ['DELETE', 'DELETE_ONLY', 'SUPPRESS_ONLY', 'UNSUPPRESS']) {
      const response = await regulate(type, [userId]);
      expect(response.statusCode).toBe(201);
      ids.push(response.json().id);
    }
    const list = await system.app.inject({ method: 'GET', url: '/admin/regulations?limit=4', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(list.statusCode).toBe(200);
    const regulations: { id: string; regulationType: string; subjectIds: string[]; createdAt: string }[] = list.json().regulations;
    expect(new Map(regulations.map((r) => [r.id, r.regulationType]))).toEqual(new Map([[ids[0], 'DELETE'], [ids[1], 'DELETE_ONLY'], [ids[2], 'SUPPRESS_ONLY'], [ids[3], 'UNSUPPRESS']]));
    expect(regulations.every((r) => r.subjectIds[0] === hashed(userId))).toBe(true);
    const times = regulations.map((r) => r.createdAt);
    expect(times).toEqual([...times].sort().reverse());
  });

  it('refuses an unknown type and a limit out of range, naming the field', async () => {
    const unknown = await regulate('SUPPRESS', ['someone']);
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().message).toContain('regulationType');
    const limit = await system.app.inject({ method: 'GET', url: '/admin/regulations?limit=0', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(limit.statusCode).toBe(400);
    expect(limit.json().message).toContain('limit');
  });
});
