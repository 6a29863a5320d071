import type { ChildProcess } from 'node:child_process';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { EncryptionCodec } from '../../src/privacy/payload-codec';
import type { PersonasSyncReport } from '../../src/workflows/personas-sync';
import { testKeyring } from '../helpers/payload-keys';
import { admin, createDefinition, ingestBatch, messagesOf, NEVER } from '../helpers/personas';
import { ownWorkerStarts, stopProcess, waitFor } from '../helpers/processes';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { sourceWithDestination, startSystem, type TestSystem } from '../helpers/system';

/**
 * "a rerun of a crashed sync (kill the worker between start and commit) delivers each
 * change once". These tests run their own worker process on their own task queue, so killing it
 * touches no other test. One change per page (PERSONAS_SYNC_PAGE_SIZE=1) makes a sync of MEMBERS
 * users take long enough to be interrupted half-way, and more than 100 pages make it continue as new.
 */
const MEMBERS = 105;
const queue = `personas-crash-${process.pid}`;
const workerEnv = { TEMPORAL_TASK_QUEUE: queue, PERSONAS_SYNC_PAGE_SIZE: '1', DELIVERY_INITIAL_BACKOFF: '200ms', DELIVERY_MAX_BACKOFF: '1s' };

let system: TestSystem;
let receiver: Receiver;
let worker: ChildProcess | undefined;

const startWorker = ownWorkerStarts('personas-crash', workerEnv, () => system.config);

beforeAll(async () => {
  system = await startSystem({ temporalTaskQueue: queue });
  receiver = await startReceiver();
  worker = await startWorker();
}, 240_000);
afterAll(async () => {
  await stopProcess(worker);
  await receiver.close();
  await system.close();
});

/** A source whose MEMBERS users all belong to a new (paused) audience; its first sync is started, not awaited. */
async function startFirstSync(name: string) {
  // The destination is switched on after the profiles are recorded: the receiver then gets only the sync's messages.
  const { source, writeKey, destination } = await sourceWithDestination(system.store, { enabled: false, webhooks: [{ url: receiver.url, headers: {} }] });
  const users = Array.from({ length: MEMBERS }, (_, i) => `member-${String(i).padStart(3, '0')}`);
  await ingestBatch(system.app, writeKey, users.map((userId) => ({ type: 'identify', userId, traits: { plan: 'pro' } })));
  await system.store.destinations.update(destination.id, { enabled: true });
  const audience = await createDefinition(system.app, source.id, 'audiences', { name, definition: { trait: 'plan', op: 'eq', value: 'pro' }, schedule: NEVER, paused: true });
  const sync = await admin(system.app, 'POST', `/audiences/${audience.id}/sync`);
  expect(sync.status).toBe(202);
  const handle = system.client.workflow.getHandle(sync.body.workflowId);
  return { source, users, audience, handle };
}

/** The sync has started deliveries (a receiver saw one) and has not committed its snapshot. */
async function waitUntilMidSync(audienceId: string) {
  await waitFor(() => {
    if (messagesOf(receiver, audienceId).length === 0) throw new Error('no delivery yet');
  }, 60_000);
  const stored = await system.store.personas.audiences.get(audienceId);
  expect(stored).toMatchObject({ lastSync: null, pending: { version: 1, changes: MEMBERS } });
}

async function countIdentifyDeliveries(sourceId: string): Promise<number> {
  return (await system.client.workflow.count(`SwitchyardSource = "${sourceId}" AND SwitchyardType = "identify"`)).count;
}

it('a worker killed between the first delivery starts and the commit: the rerun delivers each change exactly once', async () => {
  // Answers 503 until the worker is replaced, so no POST is in flight with a 2xx answer when the
  // worker dies: every 2xx below comes from a delivery that ran to its end exactly once.
  let accepting = false;
  const accepted = new Map<string, string[]>();
  receiver.respond((request) => {
    if (!accepting) return { status: 503 };
    const body = JSON.parse(request.body) as { messageId: string; userId: string };
    accepted.set(body.userId, [...(accepted.get(body.userId) ?? []), body.messageId]);
    return { status: 200 };
  });

  const { source, users, audience, handle } = await startFirstSync('Crash Test Audience');
  await waitUntilMidSync(audience.id);
  worker!.kill('SIGKILL');
  await new Promise((resolve) => worker!.once('exit', resolve));
  expect((await handle.describe()).status.name).toBe('RUNNING');

  accepting = true;
  worker = await startWorker();
  const report = (await handle.result()) as PersonasSyncReport;
  expect(report).toMatchObject({ status: 'committed', version: 1, changes: MEMBERS, pages: MEMBERS });
  expect(report.runs).toBe(2); // continued as new after 100 pages

  await waitFor(() => {
    if (accepted.size < MEMBERS) throw new Error(`${accepted.size} of ${MEMBERS} accepted`);
  }, 60_000);
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  expect([...accepted.keys()].sort()).toEqual(users);
  for (const [userId, messageIds] of accepted) expect({ userId, messageIds: messageIds.length }).toEqual({ userId, messageIds: 1 });
  expect(await waitFor(async () => {
    const count = await countIdentifyDeliveries(source.id);
    if (count !== MEMBERS) throw new Error(`${count} delivery workflows`);
    return count;
  }, 10_000)).toBe(MEMBERS);
  expect(await system.store.personas.audiences.get(audience.id)).toMatchObject({ lastSync: { version: 1 }, pending: null });
  // The cursor carried from page to page and across continue-as-new is a position: no member's id
  // in the sync's own history even once decrypted (crypto-shredding could not reach it there).
  const decrypted = await decryptedPayloads(handle);
  expect(decrypted.length).toBeGreaterThan(MEMBERS - 100);
  expect(decrypted.join('\n')).toContain('\\u0000position:');
  expect(decrypted.filter((text) => text.includes('member-'))).toEqual([]);
}, 180_000);

/** Every payload of the (latest run of the) workflow's history, decrypted with the test key, as JSON text. */
async function decryptedPayloads(handle: { fetchHistory(): Promise<unknown> }): Promise<string[]> {
  const found: Payload[] = [];
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object') {
      if ('payloads' in value && Array.isArray(value.payloads)) found.push(...(value.payloads as Payload[]));
      else Object.values(value).forEach(walk);
    }
  };
  walk(await handle.fetchHistory());
  return (await new EncryptionCodec(testKeyring()).decode(found)).map((payload) => JSON.stringify(defaultPayloadConverter.fromPayload(payload)));
}

it('a sync terminated part-way and started again finishes the same version, and Temporal refuses the deliveries already started', async () => {
  receiver.respond(() => ({ status: 200 }));
  const { source, users, audience, handle } = await startFirstSync('Rerun Audience');
  await waitUntilMidSync(audience.id);
  await handle.terminate('test: a sync that dies before its commit');

  const rerun = await admin(system.app, 'POST', `/audiences/${audience.id}/sync`);
  const report = (await system.client.workflow.getHandle(rerun.body.workflowId, rerun.body.runId).result()) as PersonasSyncReport;
  // The same version 1, not a new diff: the deliveries started before the termination are found, not repeated.
  expect(report).toMatchObject({ status: 'committed', version: 1, changes: MEMBERS });
  expect(report.existing).toBeGreaterThan(0);
  expect(report.started + report.existing).toBe(MEMBERS);

  await waitFor(() => {
    if (messagesOf(receiver, audience.id).length < MEMBERS) throw new Error('not all delivered yet');
  }, 60_000);
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  const messages = messagesOf(receiver, audience.id);
  expect(messages.map((m) => m.body.userId).sort()).toEqual(users);
  expect(new Set(messages.map((m) => m.body.messageId)).size).toBe(MEMBERS);
  expect(await countIdentifyDeliveries(source.id)).toBe(MEMBERS);
}, 180_000);
