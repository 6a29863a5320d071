import { Worker } from '@temporalio/worker';
import { deliveryPolicy } from '../../src/config';
import { deliveryWorkflowId } from '../../src/delivery/ids';
import { messageBody } from '../../src/delivery/payload';
import { ERASED_REASON } from '../../src/delivery/erasure';
import { deliveryPlanner } from '../../src/messages/plan-deliveries';
import { bodySealer } from '../../src/messages/seal-bodies';
import { identifierHash } from '../../src/privacy/keyring';
import { startDeliveryWorkflow } from '../../src/temporal/start-delivery';
import type { History } from '../helpers/histories';
import { waitFor } from '../helpers/processes';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { testDataConverter } from '../helpers/data-converter';
import { ADMIN_TOKEN, codecDecodedStartInput, decodedWorkflowHistoryText, deliveryResult, send, sourceWithDestination, useSystem, workflowHistoryText, type TestSystem } from '../helpers/system';

/**
 * Crypto-shredding: a DELETE regulation destroys the user's data key, and with it
 * every copy of the user's events: a delivery still retrying, and a workflow the regulation could
 * neither find nor delete (started without the user's search attributes: what a delivery the
 * visibility index does not show yet looks like), and a history exported before the regulation.
 */
let system: TestSystem;
let receiver: Receiver;
const others: Receiver[] = [];
useSystem((s, r) => ((system = s), (receiver = r)), { alsoClose: others });

const unique = (name: string) => `${name}-${process.pid}-${Date.now().toString(36)}`;
const CANARY_EMAIL = 'shred-canary-5d1e@example.com';
const CANARY_EVENT = 'Shred Canary Ordered';
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const requestsFor = (r: Receiver, messageId: string) => r.requests.filter((request) => (JSON.parse(request.body) as { messageId?: string }).messageId === messageId);

const replay = (history: History, name: string) =>
  Worker.runReplayHistory({ workflowsPath: require.resolve('../../src/workflows'), dataConverter: testDataConverter(), replayName: name }, history).then(() => 'replayed', (err: Error) => err);

const detail = (sourceId: string, messageId: string) => system.app.inject({ method: 'GET', url: `/admin/sources/${sourceId}/deliveries/${messageId}`, headers: admin });

describe('a DELETE regulation shreds every copy of the user\'s events', () => {
  it('a retrying delivery and a workflow the regulation cannot see send nothing more, decode to [erased], still replay; a new call gets a new key', async () => {
    const userId = unique('shred-user "zoë"');
    const subject = identifierHash(system.keyring!, 'userId', userId);
    const failing = await startReceiver(() => ({ status: 503 }));
    others.push(failing);
    const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: failing.url, headers: {} }] });

    // 1. Retrying: an ingested track, sealed under the user's key, against a receiver answering 503.
    const retryingId = unique('retrying');
    await send(system.app, writeKey, 'track', { userId, event: CANARY_EVENT, properties: { email: CANARY_EMAIL }, messageId: retryingId });
    // 2. Left undeleted: the same user's track through the same planner and sealer, started without
    // the user's search attributes, so the regulation's visibility query cannot find it.
    const hiddenId = unique('hidden');
    const now = new Date().toISOString();
    const planner = deliveryPlanner(system.store.destinations, deliveryPolicy(system.config), bodySealer(system.store.dataKeys, system.keyring!));
    const body = messageBody({ type: 'track', messageId: hiddenId, userId, timestamp: now, receivedAt: now, context: {}, event: CANARY_EVENT, properties: { email: CANARY_EMAIL } });
    const plan = await planner(source.id, [{ messageId: hiddenId, type: 'track', body }]);
    if (plan.status !== 'planned') throw new Error('no destination');
    expect(plan.inputs[0]).toMatchObject({ sealedMessage: { sealed: 1, subject } });
    expect(plan.inputs[0].message).toBeUndefined();
    // Started without its search attributes: the keyed hashes of the call's ids left out.
    const { visibleIds: _searchable, ...hidden } = plan.inputs[0];
    await startDeliveryWorkflow(system.client, system.config.temporalTaskQueue, system.keyring, hidden);

    await waitFor(async () => {
      for (const id of [retryingId, hiddenId]) if (requestsFor(failing, id).length < 2) throw new Error(`${id} not retried yet`);
    }, 30_000);
    // The receiver got the opened body; history without a codec holds neither canary.
    expect(JSON.parse(requestsFor(failing, hiddenId)[0].body)).toMatchObject({ userId, event: CANARY_EVENT, properties: { email: CANARY_EMAIL } });
    const hiddenWorkflow = deliveryWorkflowId(source.id, hiddenId);
    const rawHistory = await workflowHistoryText(hiddenWorkflow);
    expect(rawHistory).not.toContain(CANARY_EMAIL);
    // Before the regulation the operator reads the body: the codec server opens the sealed layer too.
    expect(JSON.stringify(await codecDecodedStartInput(system, await system.client.workflow.getHandle(hiddenWorkflow).fetchHistory()))).toContain(CANARY_EMAIL);
    expect((await detail(source.id, hiddenId)).json()).toMatchObject({ message: { event: CANARY_EVENT, properties: { email: CANARY_EMAIL } } });

    // The retrying delivery's history as exported before the regulation deletes it (a backup).
    const exported = await system.client.workflow.getHandle(deliveryWorkflowId(source.id, retryingId)).fetchHistory();
    await waitFor(async () => {
      if ((await system.client.workflow.count(`SwitchyardUserId = "${subject}" AND ExecutionStatus = "Running"`)).count < 1) throw new Error('not indexed yet');
    }, 10_000);

    const response = await system.app.inject({ method: 'POST', url: '/admin/regulations', headers: admin, payload: { regulationType: 'DELETE', subjectType: 'USER_ID', subjectIds: [userId] } });
    expect(response.statusCode).toBe(201);
    // The retrying one was found, stopped and deleted; the hidden one was not.
    expect(response.json()).toMatchObject({ deliveriesStopped: 1, deliveriesDeleted: 1 });
    expect(await system.store.dataKeys.get(subject)).toBeUndefined();
    failing.respond(() => ({ status: 200 }));
    const recoveredAt = Date.now();

    // The hidden workflow's next attempt finds no key: nothing sent, its destination stopped.
    expect(await deliveryResult(system.client, source.id, hiddenId)).toMatchObject({ ok: true, report: { destinations: [{ status: 'stopped' }] } });
    // Past the longest backoff (FAST_DELIVERY: 1 s) either would have come back.
    await new Promise((r) => setTimeout(r, 3_000));
    for (const id of [retryingId, hiddenId]) expect(requestsFor(failing, id).filter((r) => r.at >= recoveredAt)).toEqual([]);

    // Neither body decodes: the codec server answers [erased] (a value, not an error), for the
    // exported history and for the one still in Temporal, through the CLI's --codec-endpoint too.
    const hiddenHistory = await system.client.workflow.getHandle(hiddenWorkflow).fetchHistory();
    for (const history of [exported, hiddenHistory]) {
      const [input] = await codecDecodedStartInput(system, history);
      expect(input).toMatchObject({ sealedMessage: '[erased]' });
      expect(JSON.stringify(input)).not.toContain(CANARY_EMAIL);
      expect(JSON.stringify(input)).not.toContain(CANARY_EVENT);
      // Nor the userId: a sealed input carries only its keyed hashes for visibility.
      expect(JSON.stringify(input)).not.toContain('shred-user');
    }
    const decodedText = await decodedWorkflowHistoryText(system, hiddenWorkflow);
    expect(decodedText).toContain('[erased]');
    expect(decodedText).toContain(ERASED_REASON);
    expect(decodedText).not.toContain(CANARY_EMAIL);
    expect(decodedText).not.toContain('shred-user');
    expect((await detail(source.id, hiddenId)).json()).toMatchObject({ message: '[erased]' });

    // Both histories still replay: the workflow never opens the body.
    expect(await replay(exported, 'shred-exported')).toBe('replayed');
    expect(await replay(hiddenHistory, 'shred-hidden')).toBe('replayed');

    // The user may come back: a new call gets a new key and is delivered.
    const comeback = unique('comeback');
    const { source: later, writeKey: laterKey } = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
    await send(system.app, laterKey, 'track', { userId, event: 'Returned', messageId: comeback });
    expect(await deliveryResult(system.client, later.id, comeback)).toMatchObject({ ok: true, report: { destinations: [{ status: 'delivered' }] } });
    expect(JSON.parse(requestsFor(receiver, comeback)[0].body)).toMatchObject({ userId, event: 'Returned' });
    expect(await system.store.dataKeys.get(subject)).toBeDefined();
  }, 120_000);

  it('a call accepted before the regulation but sealed after it (under the user\'s new key) is not sent', async () => {
    const userId = unique('sealed-late');
    const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
    await send(system.app, writeKey, 'identify', { userId, traits: { plan: 'pro' }, messageId: unique('identify') });
    const acceptedAt = new Date().toISOString();
    expect((await system.app.inject({ method: 'POST', url: '/admin/regulations', headers: admin, payload: { regulationType: 'DELETE', subjectType: 'USER_ID', subjectIds: [userId] } })).statusCode).toBe(201);

    const lateId = unique('late');
    const planner = deliveryPlanner(system.store.destinations, deliveryPolicy(system.config), bodySealer(system.store.dataKeys, system.keyring!));
    const body = messageBody({ type: 'track', messageId: lateId, userId, timestamp: acceptedAt, receivedAt: acceptedAt, context: {}, event: 'Late', properties: {} });
    const plan = await planner(source.id, [{ messageId: lateId, type: 'track', userId, body }]);
    if (plan.status !== 'planned') throw new Error('no destination');
    await startDeliveryWorkflow(system.client, system.config.temporalTaskQueue, system.keyring, plan.inputs[0]);
    expect(await deliveryResult(system.client, source.id, lateId)).toMatchObject({ ok: true, report: { destinations: [{ status: 'stopped' }] } });
    expect(requestsFor(receiver, lateId)).toEqual([]);
  }, 60_000);

  it('delete notifications are not sealed: they reach the receiver with the userId after the key is gone', async () => {
    const userId = unique('notified');
    const { writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
    await send(system.app, writeKey, 'identify', { userId, traits: { plan: 'pro' }, messageId: unique('identify') });
    const response = await system.app.inject({ method: 'POST', url: '/admin/regulations', headers: admin, payload: { regulationType: 'DELETE', subjectType: 'USER_ID', subjectIds: [userId] } });
    expect(response.json()).toMatchObject({ notifications: 1 });
    await waitFor(async () => {
      if (!receiver.requests.some((r) => JSON.parse(r.body).type === 'delete' && JSON.parse(r.body).userId === userId)) throw new Error('no delete notification yet');
    }, 30_000);
  }, 60_000);
});
