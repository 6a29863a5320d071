import pino from 'pino';
import { buildApp } from '../../src/api/app';
import { deliveryPolicy } from '../../src/config';
import { deleteNotification } from '../../src/messages/delete-notification';
import { identifierHash } from '../../src/privacy/keyring';
import { startDeliveryWorkflow } from '../../src/temporal/start-delivery';
import { deliveriesOptions, temporalDeliveries } from '../../src/temporal/temporal-deliveries';
import { waitFor } from '../helpers/processes';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { ADMIN_TOKEN, deliveryResult, send, sourceWithDestination, useSystem, workflowListText, type TestSystem } from '../helpers/system';

/**
 * No plaintext identifiers in Temporal's visibility. User and anonymous ids are
 * keyed hashes there, searches and regulations hash their query, so ids with quotes, backslashes
 * and non-ASCII characters work end to end. On the run's real dev server and worker.
 */
let system: TestSystem;
let receiver: Receiver;
const others: Receiver[] = [];
useSystem((s, r) => ((system = s), (receiver = r)), { alsoClose: others });

const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
const unique = (name: string) => `${name}-${process.pid}-${Date.now().toString(36)}`;
const deleteUsers = (subjectIds: string[]) =>
  system.app.inject({ method: 'POST', url: '/admin/regulations', headers: auth, payload: { regulationType: 'DELETE', subjectType: 'USER_ID', subjectIds } });
const listByUser = async (userId: string, sourceId: string) =>
  (await system.app.inject({ method: 'GET', url: '/admin/deliveries', query: { userId, sourceId }, headers: auth })).json<{ deliveries: { messageId: string; userId?: string; status: string }[] }>();
const bodyOf = (r: Receiver['requests'][number]) => JSON.parse(r.body) as Record<string, unknown>;
const requestsFor = (r: Receiver, messageId: string) => r.requests.filter((request) => bodyOf(request).messageId === messageId);

describe('ids with quotes, backslashes and non-ASCII characters, end to end', () => {
  it('are ingested, found by GET /admin/deliveries?userId=, stopped and forgotten by a DELETE regulation, and told in its delete notification', async () => {
    const tag = unique('odd');
    const userIds = [`o"brien ${tag}`, `back\\slash\\ ${tag}`, `zoë.ßtraße+🦊@exämple.com ${tag}`, `x" OR WorkflowType = "deliverMessage ${tag}`];
    const failing = await startReceiver(() => ({ status: 503 }));
    others.push(failing);
    const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: failing.url, headers: {} }] });
    const trackIds = userIds.map((_, i) => `${tag}-track-${i}`);
    for (const [i, userId] of userIds.entries()) await send(system.app, writeKey, 'track', { userId, event: 'Private', messageId: trackIds[i] });

    // Each is retrying, and the admin API finds each by its own userId, showing the id itself.
    for (const [i, userId] of userIds.entries()) {
      await waitFor(async () => {
        if (requestsFor(failing, trackIds[i]).length < 1) throw new Error(`${trackIds[i]} not attempted yet`);
        const { deliveries } = await listByUser(userId, source.id);
        if (deliveries.length !== 1 || deliveries[0].status !== 'retrying') throw new Error(`${trackIds[i]} not indexed as retrying yet`);
        expect(deliveries[0]).toMatchObject({ messageId: trackIds[i], userId });
      }, 30_000);
    }

    const response = await deleteUsers(userIds);
    expect(response.statusCode).toBe(201);
    const regulation = response.json();
    expect(regulation).toMatchObject({ notifications: 4, deliveriesStopped: 4, deliveriesDeleted: 4 });
    failing.respond(() => ({ status: 200 }));
    const recoveredAt = Date.now();

    // The delete notifications arrive with the exact ids the seed requires.
    for (const userId of userIds) expect(await deliveryResult(system.client, source.id, deleteNotification(system.keyring, regulation, userId).messageId)).toMatchObject({ ok: true });
    const deletes = failing.requests.map(bodyOf).filter((body) => body.type === 'delete');
    expect(deletes.map((body) => body.userId).sort()).toEqual([...userIds].sort());
    // Past the longest backoff (FAST_DELIVERY: 1 s) a stopped track would have come back.
    await new Promise((r) => setTimeout(r, 3_000));
    for (const trackId of trackIds) expect(requestsFor(failing, trackId).filter((r) => r.at >= recoveredAt)).toEqual([]);

    // The record names none of them: GET returns the keyed hashes.
    const read = await system.app.inject({ method: 'GET', url: `/admin/regulations/${regulation.id}`, headers: auth });
    expect(read.json().subjectIds).toEqual(userIds.map((id) => identifierHash(system.keyring!, 'userId', id)));
    for (const userId of userIds) expect(read.body).not.toContain(JSON.stringify(userId).slice(1, -1));
  });
});

describe("Temporal's visibility holds no plaintext user or anonymous id", () => {
  it('a delivered canary and its delete notification show only keyed hashes in `temporal workflow list`, and workflow ids carry no id', async () => {
    const userId = unique('canary-user@example.com');
    const anonymousId = unique('canary-device');
    const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
    const messageId = unique('canary');
    await send(system.app, writeKey, 'track', { userId, anonymousId, event: 'Canary Event', messageId, properties: { email: userId } });
    expect(await deliveryResult(system.client, source.id, messageId)).toMatchObject({ ok: true });
    const query = `SwitchyardSource = "${source.id}"`;
    const userHash = identifierHash(system.keyring!, 'userId', userId);
    const anonymousHash = identifierHash(system.keyring!, 'anonymousId', anonymousId);
    const listedWhen = async (indexed: (listed: string) => boolean, what: string) => {
      let listed = '';
      await waitFor(async () => {
        listed = await workflowListText(query);
        if (!indexed(listed)) throw new Error(`${what} is not indexed yet`);
      }, 15_000);
      return listed;
    };
    // The canary's own entry, read before the regulation deletes it (Temporal deletes a closed
    // workflow within seconds of the regulation on the test server, and its entry with it). The
    // CLI shows memos decoded: none holds an id. The search attributes are there, as hashes (their
    // payloads are JSON strings in base64).
    const canary = await listedWhen((listed) => decodedAttributes(listed).includes(anonymousHash), 'the canary\'s anonymous id hash');
    expect(decodedAttributes(canary)).toContain(userHash);

    const regulation = (await deleteUsers([userId])).json();
    // Deleting the canary's history is asynchronous; the notification is what the regulation leaves.
    expect(await deliveryResult(system.client, source.id, deleteNotification(system.keyring, regulation, userId).messageId)).toMatchObject({ ok: true });
    const notification = await listedWhen((listed) => listed.includes(regulation.id), 'the delete notification');
    expect(decodedAttributes(notification)).toContain(userHash);
    for (const listed of [canary, notification]) {
      for (const id of [userId, anonymousId]) {
        expect(listed).not.toContain(id);
        expect(decodedAttributes(listed)).not.toContain(id);
      }
    }
  });
});

/** The search attributes' values in the CLI's JSON (payloads with base64 `data`), decoded. */
function decodedAttributes(json: string): string {
  const values: string[] = [];
  const reviver = (key: string, value: unknown) => {
    if (key === 'indexedFields' && value && typeof value === 'object') {
      for (const payload of Object.values(value as Record<string, { data?: string }>)) if (payload.data) values.push(Buffer.from(payload.data, 'base64').toString('utf8'));
    }
    return value;
  };
  // One JSON document, or one per line, depending on the CLI's version.
  try {
    JSON.parse(json, reviver);
  } catch {
    for (const line of json.split('\n').filter((l) => l.trim() !== '')) JSON.parse(line, reviver);
  }
  return values.join('\n');
}

describe('with PAYLOAD_ENCRYPTION=off (no keys)', () => {
  it('searches the plaintext attribute, and refuses a userId it cannot quote with a 400 naming the setting', async () => {
    const app = await buildApp({ config: system.config, store: system.store, deliveries: temporalDeliveries(system.client, deliveriesOptions(system.config, undefined)), keyring: undefined });
    try {
      const refused = await app.inject({ method: 'GET', url: '/admin/deliveries', query: { userId: 'x" OR WorkflowType = "deliverMessage' }, headers: auth });
      expect(refused.statusCode).toBe(400);
      expect(refused.json().message).toMatch(/^userId: with PAYLOAD_ENCRYPTION=off, a userId with a double quote/);
      const plain = await app.inject({ method: 'GET', url: '/admin/deliveries', query: { userId: unique('nobody') }, headers: auth });
      expect(plain.statusCode).toBe(200);
      expect(plain.json().deliveries).toEqual([]);
    } finally {
      await app.close();
    }
  });
});

describe('what a regulation leaves names no user', () => {
  it('a 410 to a delete notification switches the URL off naming the regulation, not the user', async () => {
    const userId = unique('gone-410-user');
    const gone = await startReceiver((request) => ({ status: (JSON.parse(request.body) as { type?: string }).type === 'delete' ? 410 : 200 }));
    others.push(gone);
    const { source, writeKey, destination } = await sourceWithDestination(system.store, { webhooks: [{ url: gone.url, headers: {} }] });
    await send(system.app, writeKey, 'identify', { userId, traits: {}, messageId: unique('seen') });
    const regulation = (await deleteUsers([userId])).json();
    await deliveryResult(system.client, source.id, deleteNotification(system.keyring, regulation, userId).messageId);
    const view = await system.app.inject({ method: 'GET', url: `/admin/destinations/${destination.id}`, headers: auth });
    expect(view.json().webhooks[0].disabled.reason).toBe(`answered HTTP 410 Gone to a delete notification of regulation ${regulation.id}`);
    expect(view.body).not.toContain(userId);
  });

  it('request log lines censor the userId the admin API was asked to search', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const app = await buildApp({ config: system.config, store: system.store, deliveries: temporalDeliveries(system.client, deliveriesOptions(system.config, system.keyring)), keyring: system.keyring, logger });
    try {
      const userId = unique('logged-user@example.com');
      const response = await app.inject({ method: 'GET', url: `/admin/deliveries?userId=${encodeURIComponent(userId)}&limit=5`, headers: auth });
      expect(response.statusCode).toBe(200);
      const logged = lines.join('');
      expect(logged).toContain('/admin/deliveries?userId=[redacted]&limit=5');
      expect(logged).not.toContain(encodeURIComponent(userId));
      expect(logged).not.toContain(userId);
    } finally {
      await app.close();
    }
  });

  it('a regulation still stops and deletes a delivery started before keys, whose attributes hold the plaintext id', async () => {
    const userId = unique('before-keys');
    const failing = await startReceiver(() => ({ status: 503 }));
    others.push(failing);
    const { source } = await sourceWithDestination(system.store, { webhooks: [{ url: failing.url, headers: {} }] });
    const [destinationId] = await system.store.destinations.listEnabledIds(source.id);
    const messageId = unique('plaintext-track');
    const at = new Date().toISOString();
    // No keyring: what a process before payload encryption (or with PAYLOAD_ENCRYPTION=off) started.
    await startDeliveryWorkflow(system.client, system.config.temporalTaskQueue, undefined, {
      sourceId: source.id,
      messageId,
      type: 'track',
      userId,
      destinationIds: [destinationId],
      message: { version: 1, type: 'track', messageId, userId, timestamp: at, receivedAt: at, context: {}, event: 'Old', properties: {} },
      policy: deliveryPolicy(system.config),
    });
    await waitFor(async () => {
      if (requestsFor(failing, messageId).length < 1) throw new Error('not attempted yet');
      if ((await system.client.workflow.count(`SwitchyardUserId = "${userId}" AND ExecutionStatus = "Running"`)).count < 1) throw new Error('not indexed yet');
    }, 30_000);
    const response = await deleteUsers([userId]);
    expect(response.json()).toMatchObject({ deliveriesStopped: 1, deliveriesDeleted: 1 });
  });
});
