import Database from 'better-sqlite3';
import type { Receiver } from '../helpers/receiver';
import { startReceiver } from '../helpers/receiver';
import { deliveryWorkflowId } from '../../src/delivery/ids';
import { deleteNotification } from '../../src/messages/delete-notification';
import { identifierHash } from '../../src/privacy/keyring';
import { startLateDelivery } from '../helpers/late-delivery';
import { waitFor } from '../helpers/processes';
import { ADMIN_TOKEN, deliveryResult, send, sourceWithDestination, useSystem, type TestSystem } from '../helpers/system';

let system: TestSystem;
let receiver: Receiver;
const others: Receiver[] = [];
useSystem((s, r) => ((system = s), (receiver = r)), { alsoClose: others });

const unique = (name: string) => `${name}-${process.pid}-${Date.now().toString(36)}`;
const deleteUsers = (subjectIds: string[]) =>
  system.app.inject({ method: 'POST', url: '/admin/regulations', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: { regulationType: 'DELETE', subjectType: 'USER_ID', subjectIds } });
/** What visibility and the regulation record hold for a user id: its keyed hash under the run's test key. */
const hashed = (kind: 'userId' | 'anonymousId', id: string) => identifierHash(system.keyring!, kind, id);
/** The message id of a regulation's delete notification to a user (derived from the keyed hash, not the id). */
const notificationId = (regulation: { id: string; createdAt: string }, userId: string) => deleteNotification(system.keyring, regulation, userId).messageId;
const bodies = (r: Receiver) => r.requests.map((request) => JSON.parse(request.body) as Record<string, unknown>);
const requestsFor = (r: Receiver, messageId: string) => r.requests.filter((request) => (JSON.parse(request.body) as { messageId?: string }).messageId === messageId);

/** Every text column of the store, the regulation record included (it keeps hashes), for "Switchyard keeps no copy of the id" checks. */
function storeMentions(id: string): string[] {
  const db = new Database(system.config.databasePath, { readonly: true });
  try {
    const found: string[] = [];
    for (const { name } of db.prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%'").all() as { name: string }[]) {
      for (const row of db.prepare(`select * from "${name}"`).all() as Record<string, unknown>[]) {
        if (Object.values(row).some((v) => typeof v === 'string' && v.includes(id))) found.push(name);
      }
    }
    return found;
  } finally {
    db.close();
  }
}

/** A receiver that answers 503 until told otherwise: deliveries to it keep retrying. */
async function failingReceiver(): Promise<{ receiver: Receiver; recover: () => number }> {
  const r = await startReceiver(() => ({ status: 503 }));
  others.push(r);
  return {
    receiver: r,
    recover() {
      r.respond(() => ({ status: 200 }));
      return Date.now();
    },
  };
}

async function retrying(r: Receiver, messageId: string) {
  await waitFor(async () => {
    if (requestsFor(r, messageId).length < 1) throw new Error(`${messageId} not attempted yet`);
  }, 30_000);
}

/** Visibility is eventually consistent: a regulation finds what the index shows. */
async function indexed(query: string, count: number) {
  await waitFor(async () => {
    if ((await system.client.workflow.count(query)).count < count) throw new Error('not indexed yet');
  }, 10_000);
}

describe('a DELETE regulation tells only the sources that have seen the user', () => {
  it("notifies the source that saw the user (a page call alone counts) and not the other one, and forgets who saw whom", async () => {
    const userId = unique('seen-once');
    const other = await startReceiver();
    others.push(other);
    const seen = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
    const unseen = await sourceWithDestination(system.store, { webhooks: [{ url: other.url, headers: {} }] });
    await send(system.app, seen.writeKey, 'page', { userId, anonymousId: `${userId}-device`, name: 'Home', messageId: unique('page') });
    await send(system.app, unseen.writeKey, 'track', { userId: unique('someone-else'), event: 'Other', messageId: unique('other') });

    const response = await deleteUsers([userId]);
    expect(response.statusCode).toBe(201);
    const regulation = response.json();
    expect(regulation).toMatchObject({ subjectIds: [hashed('userId', userId)], notifications: 1 });

    expect(await deliveryResult(system.client, seen.source.id, notificationId(regulation, userId))).toMatchObject({ ok: true });
    expect(bodies(receiver)).toContainEqual({ type: 'delete', userId, timestamp: regulation.createdAt });
    const notStarted = await system.client.workflow.getHandle(deliveryWorkflowId(unseen.source.id, notificationId(regulation, userId))).describe().then(() => true, () => false);
    expect(notStarted).toBe(false);
    expect(bodies(other).filter((body) => body.type === 'delete')).toEqual([]);
    expect(bodies(other).some((body) => JSON.stringify(body).includes(userId))).toBe(false);

    // No table keeps the user or the id seen with it; the regulation record keeps the keyed hash.
    expect(await system.store.sourceUsers.sourcesThatSaw([userId])).toEqual(new Map());
    expect(storeMentions(userId)).toEqual([]);
    expect(await system.store.regulations.get(regulation.id)).toMatchObject({ subjectIds: [hashed('userId', userId)] });
  });

  it('a request accepted before the regulation but written after it does not bring the user back', async () => {
    const userId = unique('in-transit');
    const { source } = await system.store.sources.create('in transit');
    const acceptedAt = new Date().toISOString();
    expect((await deleteUsers([userId])).statusCode).toBe(201);

    // The request's profile transaction commits only now: nothing about the erased ids is written.
    await system.store.personas.profiles.record(source.id, [{ type: 'identify', userId, anonymousId: `${userId}-device`, traits: { plan: 'pro' } }], [{ userId, linkedIds: [`${userId}-device`] }], acceptedAt);
    expect(await system.store.personas.profiles.get(source.id, userId)).toBeUndefined();
    expect(storeMentions(userId)).toEqual([]);

    // A request that arrived after the regulation is the user coming back.
    await system.store.personas.profiles.record(source.id, [{ type: 'identify', userId, traits: { plan: 'pro' } }], [{ userId, linkedIds: [] }], new Date().toISOString());
    expect(await system.store.personas.profiles.get(source.id, userId)).toMatchObject({ traits: { plan: 'pro' } });
    expect(await system.store.sourceUsers.sourcesThatSaw([userId])).toEqual(new Map([[source.id, [userId]]]));
  });

  it('notifies nobody about a user no source has seen', async () => {
    const response = await deleteUsers([unique('never-seen')]);
    expect(response.statusCode).toBe(201);
    expect(response.json()).toMatchObject({ notifications: 0, deliveriesStopped: 0 });
  });
});

describe("a DELETE regulation stops the user's deliveries still under way", () => {
  it('a track retrying against a failing receiver never reaches it; the delete does, and the workflow is deleted', async () => {
    const userId = unique('retrying-user');
    const { receiver: failing, recover } = await failingReceiver();
    const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: failing.url, headers: {} }] });
    const trackId = unique('track');
    await send(system.app, writeKey, 'track', { userId, event: 'Private', messageId: trackId });
    await retrying(failing, trackId);
    await indexed(`SwitchyardUserId = "${hashed('userId', userId)}" AND ExecutionStatus = "Running"`, 1);

    const response = await deleteUsers([userId]);
    expect(response.statusCode).toBe(201);
    const regulation = response.json();
    expect(regulation).toMatchObject({ notifications: 1, deliveriesStopped: 1, deliveriesDeleted: 1 });
    const recoveredAt = recover();

    expect(await deliveryResult(system.client, source.id, notificationId(regulation, userId))).toMatchObject({ ok: true });
    const deleteArrived = failing.requests.find((r) => JSON.parse(r.body).type === 'delete')!;
    expect(JSON.parse(deleteArrived.body)).toEqual({ type: 'delete', userId, timestamp: regulation.createdAt });
    // Past the longest backoff (FAST_DELIVERY: 1 s) the stopped track would have come back.
    await new Promise((r) => setTimeout(r, 3_000));
    expect(requestsFor(failing, trackId).filter((r) => r.at >= recoveredAt)).toEqual([]);
    expect(requestsFor(failing, trackId).every((r) => r.at < deleteArrived.at)).toBe(true);
  });

  it('covers a track made under an anonymousId that was later aliased to the user', async () => {
    const userId = unique('aliased-user');
    const anonymousId = unique('anon');
    const { receiver: failing, recover } = await failingReceiver();
    const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: failing.url, headers: {} }] });
    const trackId = unique('anon-track');
    const aliasId = unique('alias');
    await send(system.app, writeKey, 'track', { anonymousId, event: 'Browsed', messageId: trackId });
    await send(system.app, writeKey, 'alias', { previousId: anonymousId, userId, messageId: aliasId });
    await retrying(failing, trackId);
    await retrying(failing, aliasId);
    await indexed(`SwitchyardAnonymousId = "${hashed('anonymousId', anonymousId)}" AND ExecutionStatus = "Running"`, 1);
    await indexed(`SwitchyardUserId = "${hashed('userId', userId)}" AND ExecutionStatus = "Running"`, 1);

    const response = await deleteUsers([userId]);
    expect(response.statusCode).toBe(201);
    const regulation = response.json();
    expect(regulation).toMatchObject({ notifications: 1, deliveriesStopped: 2, deliveriesDeleted: 2 });
    const recoveredAt = recover();

    expect(await deliveryResult(system.client, source.id, notificationId(regulation, userId))).toMatchObject({ ok: true });
    await new Promise((r) => setTimeout(r, 3_000));
    for (const messageId of [trackId, aliasId]) expect(requestsFor(failing, messageId).filter((r) => r.at >= recoveredAt)).toEqual([]);
    expect(bodies(failing).filter((body) => body.type === 'delete')).toEqual([{ type: 'delete', userId, timestamp: regulation.createdAt }]);
    expect(storeMentions(anonymousId)).toEqual([]);
  });

  it('an attempt of a message accepted before the regulation sends nothing, even when its workflow started after it', async () => {
    // What a call accepted just before the regulation looks like when its workflow start lands after
    // the regulation's stop: the send-time check is all that stands between it and the receiver.
    const userId = unique('late-start');
    const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
    await send(system.app, writeKey, 'identify', { userId, traits: { plan: 'pro' }, messageId: unique('identify') });
    const acceptedAt = new Date().toISOString();
    const response = await deleteUsers([userId]);
    expect(response.statusCode).toBe(201);

    const lateId = unique('late');
    await startLateDelivery(system, source.id, userId, lateId, acceptedAt);
    const result = await deliveryResult(system.client, source.id, lateId);
    expect(result).toMatchObject({ ok: true, report: { destinations: [{ status: 'stopped' }] } });
    expect(requestsFor(receiver, lateId)).toEqual([]);

    // The user may come back: a call accepted after the regulation is delivered as usual.
    const comeback = unique('comeback');
    await send(system.app, writeKey, 'track', { userId, event: 'Returned', messageId: comeback });
    expect(await deliveryResult(system.client, source.id, comeback)).toMatchObject({ ok: true, report: { destinations: [{ status: 'delivered' }] } });
  });
});
