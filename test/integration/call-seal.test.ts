import type { Payload } from '@temporalio/common';
import type { History } from '../helpers/histories';
import { deliveryWorkflowId } from '../../src/delivery/ids';
import { identifierHash } from '../../src/privacy/keyring';
import { testLoadedDataConverter } from '../helpers/data-converter';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { replayFinished, startReplay } from '../helpers/replay-api';
import { ADMIN_TOKEN, codecDecodedStartInput, deliveryResult, send, sourceWithDestination, useSystem, type TestSystem } from '../helpers/system';

/**
 * Sealing is the call's, never a destination's rules'. A
 * filter on the first destination dropping `userId` used to switch crypto-shredding off for the
 * whole message: every body in Temporal under the master key only, a DELETE regulation shredding
 * none of them. And a replay over a range holding a message of a user erased
 * (DELETE_ONLY) who has come back used to fail outright.
 */
let system: TestSystem;
const receivers: Receiver[] = [];
useSystem((s) => (system = s), { alsoClose: receivers });

const unique = (name: string) => `${name}-${process.pid}-${Date.now().toString(36)}`;
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const CANARY_EMAIL = 'call-seal-canary-9b2e@example.com';

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  receivers.push(r);
  return r;
}

const bodiesFor = (r: Receiver, messageId: string) => r.requests.map((request) => JSON.parse(request.body) as Record<string, unknown>).filter((body) => body.messageId === messageId);

/** The workflow input of an exported history as the master-key codec alone decodes it: what Temporal's backups and exports hold. */
async function masterKeyDecodedInput(history: History): Promise<string> {
  const payloads = history.events![0].workflowExecutionStartedEventAttributes!.input!.payloads! as Payload[];
  const converter = testLoadedDataConverter();
  const decoded = await converter.payloadCodecs[0].decode(payloads);
  return decoded.map((payload) => Buffer.from(payload.data ?? []).toString('utf8')).join('\n');
}

describe('sealing is decided by the call, never by a destination\'s rules', () => {
  it('two destinations, the first dropping userId: an exported history no longer decodes to the user after a DELETE regulation', async () => {
    const userId = unique('sealed-by-call-user');
    const [first, second] = [await receiver(), await receiver()];
    const { source, writeKey, destination: dropping } = await sourceWithDestination(system.store, { webhooks: [{ url: first.url, headers: {} }] });
    await system.store.destinations.create(source.id, { enabled: true, webhooks: [{ url: second.url, headers: {} }] });
    const filter = await system.app.inject({
      method: 'POST',
      url: `/admin/destinations/${dropping.id}/filters`,
      headers: admin,
      payload: { title: 'no ids', enabled: true, if: 'all', actions: [{ type: 'DROP_PROPERTIES', fields: { '': ['userId', 'anonymousId'] } }] },
    });
    expect(filter.statusCode).toBe(201);

    const messageId = unique('sealed-by-call');
    await send(system.app, writeKey, 'track', { userId, event: 'Order Completed', properties: { email: CANARY_EMAIL }, messageId });
    expect(await deliveryResult(system.client, source.id, messageId)).toMatchObject({ ok: true, report: { destinations: [{ status: 'delivered' }, { status: 'delivered' }] } });
    // Each receiver got its own body: the first without the ids, the second whole.
    expect(bodiesFor(first, messageId)[0]).not.toHaveProperty('userId');
    expect(bodiesFor(first, messageId)[0]).toMatchObject({ properties: { email: CANARY_EMAIL } });
    expect(bodiesFor(second, messageId)[0]).toMatchObject({ userId, properties: { email: CANARY_EMAIL } });

    // A history exported before the regulation (a backup): under the master key alone, nothing of the user.
    const exported = await system.client.workflow.getHandle(deliveryWorkflowId(source.id, messageId)).fetchHistory();
    const underMasterKey = await masterKeyDecodedInput(exported);
    expect(underMasterKey).toContain('"sealedMessage"');
    expect(underMasterKey).not.toContain(userId);
    expect(underMasterKey).not.toContain(CANARY_EMAIL);
    // The operator's codec server opens both bodies while the user's key exists.
    const before = JSON.stringify((await codecDecodedStartInput(system, exported))[0]);
    expect(before).toContain(CANARY_EMAIL);
    expect(before).toContain(userId);

    const regulation = await system.app.inject({ method: 'POST', url: '/admin/regulations', headers: admin, payload: { regulationType: 'DELETE', subjectType: 'USER_ID', subjectIds: [userId] } });
    expect(regulation.statusCode).toBe(201);
    expect(await system.store.dataKeys.get(identifierHash(system.keyring!, 'userId', userId))).toBeUndefined();

    // After it, neither the message's body nor the second destination's own decodes: both [erased].
    const after = (await codecDecodedStartInput(system, exported))[0] as Record<string, unknown>;
    expect(after).toMatchObject({ sealedMessage: '[erased]' });
    for (const own of Object.values((after.destinationBodies ?? {}) as Record<string, unknown>)) expect(own).toEqual({ sealedMessage: '[erased]' });
    expect(JSON.stringify(after)).not.toContain(userId);
    expect(JSON.stringify(after)).not.toContain(CANARY_EMAIL);
  }, 120_000);
});

describe('a replay over a user erased (DELETE_ONLY) who has come back', () => {
  it('finishes, the message sealed under the destroyed key counted erased and the new one delivered', async () => {
    const userId = unique('returned-user');
    const live = await receiver();
    const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: live.url, headers: {} }] });
    const since = new Date(Date.now() - 1_000).toISOString();
    const before = unique('before-erasure');
    await send(system.app, writeKey, 'track', { userId, event: 'Before', messageId: before });
    await deliveryResult(system.client, source.id, before);
    const regulation = await system.app.inject({ method: 'POST', url: '/admin/regulations', headers: admin, payload: { regulationType: 'DELETE_ONLY', subjectType: 'USER_ID', subjectIds: [userId] } });
    expect(regulation.statusCode).toBe(201);
    // The user comes back: a new call, a new data key under the same subject.
    const after = unique('after-erasure');
    await send(system.app, writeKey, 'track', { userId, event: 'After', messageId: after });
    await deliveryResult(system.client, source.id, after);

    const backfill = await receiver();
    const target = await system.store.destinations.create(source.id, { enabled: true, webhooks: [{ url: backfill.url, headers: {} }] });
    const id = await startReplay(system, { sourceId: source.id, destinationId: target.id, since, until: new Date(Date.now() + 1_000).toISOString() });
    const replay = await replayFinished(system, id, 60_000);
    expect(replay).toMatchObject({ status: 'completed', matched: 2, started: 1, skipped: { erased: 1, suppressed: 0, filtered: 0 } });
    await backfill.waitForRequests(1, 30_000);
    expect(backfill.requests.map((request) => (JSON.parse(request.body) as { messageId: string }).messageId)).toEqual([after]);
  }, 120_000);
});
