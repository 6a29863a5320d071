/**
 * Re-records the workflow histories that test/integration/replay.test.ts replays against today's
 * workflow code: `npm run record-histories` (or `npx tsx scripts/record-histories.ts`).
 *
 * Every history comes from a real run: the test run's setup (test/helpers/global-setup.ts) starts a
 * real Temporal dev server and a real worker process, the API is the real one, and webhooks are
 * real HTTP receivers on 127.0.0.1 answering as each scenario needs. Re-record only when a workflow
 * change is meant to be incompatible (and running workflows are drained or patched), or to add a
 * scenario; a replay failure otherwise means the change would break deliveries already running.
 *
 * Files: test/fixtures/histories/<scenario>.json, in the JSON of `temporal workflow show --output
 * json`, written and read by test/helpers/histories.ts. Their payloads are encrypted with the
 * committed test key (test/fixtures/payload-keys, which the test setup gives every process), as a
 * production history is; test/fixtures/histories/before-encryption/ keeps the same scenarios as
 * recorded before payload encryption, for workflows still running when encryption was switched on.
 *
 * `npm run record-histories -- <scenario> ...` records only those scenarios: add a new one without
 * re-recording the histories of earlier code, which must keep replaying as they were recorded.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { Config } from '../src/config';
import { deliveryWorkflowId } from '../src/delivery/ids';
import type { Store } from '../src/store/types';
import globalSetup from '../test/helpers/global-setup';
import { isSlowLane } from '../src/delivery/slow-lane';
import globalTeardown from '../test/helpers/global-teardown';
import { faultDir, startOwnWorker, stopProcess } from '../test/helpers/faults';
import { historyToJSON } from '../test/helpers/histories';
import { admin, createDefinition, ingestBatch, NEVER } from '../test/helpers/personas';
import { ROOT, waitFor } from '../test/helpers/processes';
import { startReceiver, type Receiver, type Responder } from '../test/helpers/receiver';
import { ADMIN_TOKEN, basicAuth, deliveryResult, send, startSystem, type TestSystem } from '../test/helpers/system';
import { startOtlpReceiver } from '../test/helpers/otlp-receiver';
import { startTracing } from '../src/tracing/tracing';

const OUT = path.join(ROOT, 'test/fixtures/histories');

/**
 * One change per Personas sync page, so a sync of PAGES_PER_RUN (100) + 2 members continues as new
 * once (the same trick as test/integration/personas-crash.test.ts). The worker reads it at start.
 */
const PERSONAS_SYNC_PAGE_SIZE = '1';
const CONTINUE_AS_NEW_MEMBERS = 102;

const receivers: Receiver[] = [];
const systems: TestSystem[] = [];
const ownWorkers: ChildProcess[] = [];

/** Scenarios named on the command line; none named: every scenario. */
const only = new Set(process.argv.slice(2));
const wanted = (name: string) => only.size === 0 || only.has(name);

async function receiver(responder: Responder): Promise<Receiver> {
  const r = await startReceiver(responder);
  receivers.push(r);
  return r;
}

async function system(overrides: Partial<Config> = {}): Promise<TestSystem> {
  const s = await startSystem(overrides);
  systems.push(s);
  return s;
}

async function destinationFor(store: Store, name: string, urls: string[], enabled = true) {
  const { source, writeKey } = await store.sources.create(`record-histories ${name}`);
  const destination = await store.destinations.create(source.id, { enabled, webhooks: urls.map((url) => ({ url, headers: {} })) });
  return { source, writeKey, destination };
}

async function save(client: Client, name: string, workflowId: string, runId?: string): Promise<void> {
  const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
  writeFileSync(path.join(OUT, `${name}.json`), `${historyToJSON(history)}\n`);
  console.log(`recorded ${name}: ${history.events?.length} events`);
}

/** Sends one track call through the real API and waits for its delivery workflow to close. */
async function deliver(s: TestSystem, name: string, urls: string[], expected: string, options: { during?: (destinationId: string) => Promise<void>; warmUp?: boolean } = {}) {
  if (!wanted(name)) return;
  const { source, writeKey, destination } = await destinationFor(s.store, name, urls);
  if (options.warmUp) {
    // The worker runs a first attempt locally only to a webhook it has seen answer fast (activities/webhook-traffic.ts).
    await send(s.app, writeKey, 'track', { userId: 'u', event: 'Warm-up', messageId: `record-${name}-warm-up` });
    await deliveryResult(s.client, source.id, `record-${name}-warm-up`);
  }
  const messageId = `record-${name}`;
  await send(s.app, writeKey, 'track', { userId: 'u', event: 'Recorded', messageId, properties: { scenario: name } });
  await options.during?.(destination.id);
  const result = await deliveryResult(s.client, source.id, messageId);
  const outcome = result.ok ? result.report.destinations.map((d) => `${d.status} in ${d.rounds} round(s)`).join(', ') : result.message;
  if (!outcome.includes(expected)) throw new Error(`${name}: expected "${expected}", got ${JSON.stringify(result)}`);
  await save(s.client, name, deliveryWorkflowId(source.id, messageId));
}

const ok: Responder = () => ({ status: 200 });
const down: Responder = () => ({ status: 503 });

async function recordDeliveries(): Promise<void> {
  const local = await system({ deliveryFirstAttemptLocal: true });
  const remote = await system({ deliveryFirstAttemptLocal: false });

  // A first attempt as a local activity: to a webhook the worker knows answers fast it is the only
  // attempt (a marker in history); to a new one the local attempt defers to a regular activity.
  await deliver(local, 'deliver-first-try-local-activity', [(await receiver(ok)).url], 'delivered in 1 round', { warmUp: true });
  await deliver(local, 'deliver-first-try-local-deferred', [(await receiver(ok)).url], 'delivered in 1 round');
  await deliver(remote, 'deliver-first-try-activity', [(await receiver(ok)).url], 'delivered in 1 round');
  await deliver(local, 'deliver-failover-second-url', [(await receiver(down)).url, (await receiver(ok)).url], 'delivered in 1 round');

  // Round 1: 503 with Retry-After: 1; round 2: 500; round 3: accepted.
  const flaky = await receiver((_req, n) => (n === 0 ? { status: 503, headers: { 'retry-after': '1' } } : { status: n === 1 ? 500 : 200 }));
  await deliver(local, 'deliver-retry-rounds', [flaky.url], 'delivered in 3 round(s)');

  const short = await system({ deliveryRetryWindow: 3_000, deliveryInitialBackoff: 200, deliveryMaxBackoff: 400 });
  await deliver(short, 'deliver-retry-window-exhausted', [(await receiver(() => ({ status: 502 }))).url], 'retry window exhausted');

  // Switched off after two failed rounds: the next attempt sees it and the delivery stops.
  const stopping = await receiver(down);
  await deliver(local, 'deliver-destination-switched-off', [stopping.url], 'stopped', {
    during: async (destinationId) => {
      await stopping.waitForRequests(2);
      await local.store.destinations.update(destinationId, { enabled: false });
    },
  });

  // policy.deliveredImplied: a delivery that succeeds writes no last status. The histories
  // above were recorded before it, with `delivered` upserted at the end, and keep replaying so.
  await deliver(local, 'deliver-delivered-implied-first-try', [(await receiver(ok)).url], 'delivered in 1 round', { warmUp: true });
  await deliver(local, 'deliver-delivered-implied-after-retry', [(await receiver((_req, n) => ({ status: n === 0 ? 503 : 200 }))).url], 'delivered in 2 round(s)');
}

/**
 * The delivery rules that used to break, each behind a patch in deliverMessage: histories of workflows that
 * reached them (the hard window's marker is in every delivery recorded since).
 */
async function recordDeliveryRules(): Promise<void> {
  const short = await system({ deliveryRetryWindow: 3_000, deliveryInitialBackoff: 200, deliveryMaxBackoff: 400 });
  // Every attempt's schedule-to-close is the time left in the window.
  await deliver(short, 'deliver-hard-window-exhausted', [(await receiver(() => ({ status: 502 }))).url], 'retry window exhausted');

  if (wanted('deliver-busy-waits-its-turn')) {
    // More messages at once than the run's worker lets through to one webhook (its default cap, 20):
    // the rest come back busy and wait their turn on the same URL.
    const s = await system();
    const slow = await receiver(() => ({ status: 200, delayMs: 1_000 }));
    const backup = await receiver(ok);
    const { source, writeKey } = await destinationFor(s.store, 'busy', [slow.url, backup.url]);
    const ids = Array.from({ length: 30 }, (_, i) => `record-busy-${i}`);
    await Promise.all(ids.map((messageId) => send(s.app, writeKey, 'track', { userId: 'u', event: 'Recorded', messageId })));
    for (const messageId of ids) {
      const result = await deliveryResult(s.client, source.id, messageId);
      if (!result.ok || result.report.destinations[0].webhookIndex !== 0 || result.report.destinations[0].rounds !== 1) throw new Error(`busy: ${JSON.stringify(result)}`);
    }
    if (backup.requests.length > 0) throw new Error('busy: a message failed over to the backup URL');
    for (const messageId of ids) {
      const { events } = await s.client.workflow.getHandle(deliveryWorkflowId(source.id, messageId)).fetchHistory();
      if ((events ?? []).some((e) => e.timerStartedEventAttributes)) {
        await save(s.client, 'deliver-busy-waits-its-turn', deliveryWorkflowId(source.id, messageId));
        break;
      }
      if (messageId === ids[ids.length - 1]) throw new Error('busy: no message waited for its turn');
    }
  }

  if (wanted('deliver-busy-waits-in-slow-lane')) {
    // As above, since the slow lane: the busy ones are made again in the slow lane and wait there.
    const s = await system();
    const slow = await receiver(() => ({ status: 200, delayMs: 1_000 }));
    const { source, writeKey } = await destinationFor(s.store, 'slow lane', [slow.url]);
    const ids = Array.from({ length: 30 }, (_, i) => `record-slow-lane-${i}`);
    await Promise.all(ids.map((messageId) => send(s.app, writeKey, 'track', { userId: 'u', event: 'Recorded', messageId })));
    for (const messageId of ids) {
      const result = await deliveryResult(s.client, source.id, messageId);
      if (!result.ok || result.report.destinations[0].rounds !== 1) throw new Error(`slow lane: ${JSON.stringify(result)}`);
    }
    for (const messageId of ids) {
      const { events } = await s.client.workflow.getHandle(deliveryWorkflowId(source.id, messageId)).fetchHistory();
      if ((events ?? []).some((e) => isSlowLane(e.activityTaskScheduledEventAttributes?.taskQueue?.name ?? ''))) {
        await save(s.client, 'deliver-busy-waits-in-slow-lane', deliveryWorkflowId(source.id, messageId));
        break;
      }
      if (messageId === ids[ids.length - 1]) throw new Error('slow lane: no message waited there');
    }
  }

  if (wanted('deliver-failed-in-slow-lane-starts-there')) {
    // Since slow-lane rounds: 30 messages to a receiver whose first 26 requests outlast the
    // timeout; those that found it busy fail in the slow lane, and their next round starts there.
    const s = await system({ deliveryTimeout: 1_500, deliveryRetryWindow: 120_000, deliveryInitialBackoff: 200, deliveryMaxBackoff: 500 });
    const hanging = await receiver((_request, n) => (n < 26 ? { status: 200, delayMs: 4_000 } : { status: 200 }));
    const { source, writeKey } = await destinationFor(s.store, 'slow lane first', [hanging.url]);
    const ids = Array.from({ length: 30 }, (_, i) => `record-slow-lane-first-${i}`);
    await Promise.all(ids.map((messageId) => send(s.app, writeKey, 'track', { userId: 'u', event: 'Recorded', messageId })));
    for (const messageId of ids) {
      const result = await deliveryResult(s.client, source.id, messageId);
      if (!result.ok) throw new Error(`slow lane first: ${JSON.stringify(result)}`);
    }
    for (const messageId of ids) {
      const { events } = await s.client.workflow.getHandle(deliveryWorkflowId(source.id, messageId)).fetchHistory();
      // The patch marker's details are encrypted: a round started in the slow lane shows as two slow-lane attempts in a row.
      const queues = (events ?? []).flatMap((e) => (e.activityTaskScheduledEventAttributes ? [isSlowLane(e.activityTaskScheduledEventAttributes.taskQueue?.name ?? '')] : []));
      if (queues.some((slow, i) => slow && queues[i + 1] === true)) {
        await save(s.client, 'deliver-failed-in-slow-lane-starts-there', deliveryWorkflowId(source.id, messageId));
        break;
      }
      if (messageId === ids[ids.length - 1]) throw new Error('slow lane first: no round started in the slow lane');
    }
  }

  if (wanted('deliver-lost-first-attempt-keeps-failover')) {
    // A worker of this script's own, killed while the first attempt (to a hanging URL) runs.
    const taskQueue = `record-histories-lost-${process.pid}`;
    const dir = faultDir('record-histories');
    const s = await system({ temporalTaskQueue: taskQueue, deliveryTimeout: 2_000, deliveryRetryWindow: 120_000 });
    const hanging = await receiver(() => ({ status: 200, delayMs: 15_000 }));
    const first = await startOwnWorker({ TEMPORAL_TASK_QUEUE: taskQueue }, path.join(dir, 'worker-1.log'));
    ownWorkers.push(first.process);
    await deliver(s, 'deliver-lost-first-attempt-keeps-failover', [hanging.url, (await receiver(ok)).url], 'delivered in 1 round', {
      during: async () => {
        await hanging.waitForRequests(1);
        await stopProcess(first.process, 'SIGKILL');
        ownWorkers.push((await startOwnWorker({ TEMPORAL_TASK_QUEUE: taskQueue }, path.join(dir, 'worker-2.log'))).process);
      },
    });
  }
}

/**
 * Flow control (policy.maxHoldMs): a delivery held on a paused destination, then resumed,
 * behind a rate limit (held asks, timers, a reserved slot, then the attempt). Recorded encrypted only:
 * no delivery from before encryption carries the policy.
 */
async function recordFlowControl(): Promise<void> {
  const name = 'deliver-held-then-resumed';
  if (!wanted(name)) return;
  // Checks up to 10 s apart: the resume's signal, not a check, wakes them.
  const s = await system({ deliveryHoldCheckInterval: 10_000 });
  const hook = await receiver(ok);
  const { source, writeKey } = await s.store.sources.create(`record-histories ${name}`);
  const destination = await s.store.destinations.create(source.id, { enabled: true, paused: true, maxRequestsPerSecond: 1, webhooks: [{ url: hook.url, headers: {} }] });
  const ids = [`record-${name}`, `record-${name}-2`];
  for (const messageId of ids) await send(s.app, writeKey, 'track', { userId: 'u', event: 'Recorded', messageId });
  // Held past two checks (0.5 and 1.5 s in), then resumed: the second message also waits a second for its slot.
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  if (hook.requests.length > 0) throw new Error(`${name}: a paused destination was sent to`);
  // Through the admin API, as an operator resumes: the held deliveries are signalled awake.
  const resumed = await s.app.inject({ method: 'PATCH', url: `/admin/destinations/${destination.id}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: { paused: false } });
  if (resumed.statusCode !== 200) throw new Error(`${name}: resume answered ${resumed.statusCode}`);
  for (const messageId of ids) {
    const result = await deliveryResult(s.client, source.id, messageId);
    if (!result.ok || result.report.destinations[0].rounds !== 1) throw new Error(`${name}: ${JSON.stringify(result)}`);
  }
  // The one that also waited for its slot under the rate limit.
  for (const messageId of ids) {
    const { events } = await s.client.workflow.getHandle(deliveryWorkflowId(source.id, messageId)).fetchHistory();
    const signalled = (events ?? []).some((e) => e.workflowExecutionSignaledEventAttributes);
    if (signalled && (events ?? []).filter((e) => e.timerStartedEventAttributes).length >= 3) return save(s.client, name, deliveryWorkflowId(source.id, messageId));
  }
  throw new Error(`${name}: no message was woken by the resume and then waited for its rate-limit slot`);
}

/** A paused audience whose members all joined: its first sync, started through the admin API, and every run's id. */
async function recordSyncs(): Promise<void> {
  if (!['sync-audience-continued-as-new.run-1', 'sync-audience-continued-as-new.run-2', 'sync-computed-trait'].some(wanted)) return;
  const s = await system();
  const hook = await receiver(ok);

  // The destination is switched on after the profiles are recorded, so ingestion starts no deliveries.
  const { source, writeKey, destination } = await destinationFor(s.store, 'personas', [hook.url], false);
  const users = Array.from({ length: CONTINUE_AS_NEW_MEMBERS }, (_, i) => `member-${String(i).padStart(3, '0')}`);
  await ingestBatch(s.app, writeKey, users.map((userId, i) => ({ type: 'identify', userId, traits: { plan: 'pro' }, messageId: `identify-${i}` })));
  await ingestBatch(s.app, writeKey, users.slice(0, 2).map((userId, i) => ({ type: 'track', userId, event: 'Order Completed', properties: { total: 10 + i }, messageId: `order-${i}` })));
  await s.store.destinations.update(destination.id, { enabled: true });

  const audience = await createDefinition(s.app, source.id, 'audiences', { name: 'Pro Members', definition: { trait: 'plan', op: 'eq', value: 'pro' }, schedule: NEVER, paused: true });
  const sync = await admin(s.app, 'POST', `/audiences/${audience.id}/sync`);
  if (sync.status !== 202) throw new Error(`audience sync answered ${sync.status}: ${JSON.stringify(sync.body)}`);
  const { workflowId, runId: firstRunId } = sync.body as { workflowId: string; runId: string };
  const report = (await s.client.workflow.getHandle(workflowId).result()) as { status: string; runs: number; started: number };
  if (report.status !== 'committed' || report.runs !== 2 || report.started !== CONTINUE_AS_NEW_MEMBERS) throw new Error(`audience sync: ${JSON.stringify(report)}`);
  const { runId: lastRunId } = await s.client.workflow.getHandle(workflowId).describe();
  await save(s.client, 'sync-audience-continued-as-new.run-1', workflowId, firstRunId);
  await save(s.client, 'sync-audience-continued-as-new.run-2', workflowId, lastRunId);

  // The other sync workflow type, so both names keep replaying.
  const trait = await createDefinition(s.app, source.id, 'computed-traits', { name: 'Order Total', definition: { type: 'sum', event: 'Order Completed', property: 'total' }, schedule: NEVER, paused: true });
  const traitSync = await admin(s.app, 'POST', `/computed-traits/${trait.id}/sync`);
  if (traitSync.status !== 202) throw new Error(`computed trait sync answered ${traitSync.status}: ${JSON.stringify(traitSync.body)}`);
  const traitRun = traitSync.body as { workflowId: string; runId: string };
  const traitReport = (await s.client.workflow.getHandle(traitRun.workflowId).result()) as { status: string; started: number };
  if (traitReport.status !== 'committed' || traitReport.started !== 2) throw new Error(`computed trait sync: ${JSON.stringify(traitReport)}`);
  await save(s.client, 'sync-computed-trait', traitRun.workflowId, traitRun.runId);

  // Every identify the syncs started has reached the receiver, so no delivery is left running.
  await waitFor(() => {
    if (hook.requests.length < CONTINUE_AS_NEW_MEMBERS + 2) throw new Error(`${hook.requests.length} identify deliveries so far`);
  }, 60_000);
}

/** A bulk redelivery job over three refused deliveries: a page, waits, checks until its redeliveries close. */
async function recordRedeliveries(): Promise<void> {
  if (!wanted('redeliver-matching')) return;
  const s = await system();
  let answer = 400;
  const hook = await receiver(() => ({ status: answer }));
  const since = new Date(Date.now() - 1_000).toISOString();
  const { source, writeKey } = await destinationFor(s.store, 'redeliver-matching', [hook.url]);
  const ids = ['record-redeliver-0', 'record-redeliver-1', 'record-redeliver-2'];
  for (const messageId of ids) await send(s.app, writeKey, 'track', { userId: 'u', event: 'Recorded', messageId });
  for (const messageId of ids) {
    const result = await deliveryResult(s.client, source.id, messageId);
    if (result.ok) throw new Error(`${messageId}: expected a refused delivery`);
  }
  const auth = { authorization: `Bearer ${s.config.adminToken}` };
  await waitFor(async () => {
    const page = (await s.app.inject({ method: 'GET', url: '/admin/deliveries', query: { sourceId: source.id, status: 'failed' }, headers: auth })).json<{ deliveries: unknown[] }>();
    if (page.deliveries.length !== ids.length) throw new Error(`${page.deliveries.length} listed failed`);
  }, 30_000);
  answer = 200;
  const started = await s.app.inject({ method: 'POST', url: `/admin/sources/${source.id}/redeliver`, headers: auth, payload: { status: 'failed', since, until: new Date(Date.now() + 60_000).toISOString() } });
  if (started.statusCode !== 202) throw new Error(`bulk redelivery answered ${started.statusCode}: ${started.body}`);
  const { id } = started.json<{ id: string }>();
  const workflowId = `redelivery:${id}`;
  const report = (await s.client.workflow.getHandle(workflowId).result()) as { status: string; started: number; finished: number };
  if (report.status !== 'completed' || report.started !== ids.length || report.finished !== ids.length) throw new Error(`bulk redelivery: ${JSON.stringify(report)}`);
  await save(s.client, 'redeliver-matching', workflowId);
}

/**
 * A replay of three archived messages to a destination made after them, paused once and
 * resumed (its Updates), and one of its replayed deliveries (input.replay: the header). Recorded
 * paced by live lag (`replay-archive-paced`); `replay-archive` is the same scenario recorded before
 * pacing, kept as it was for replays running across the upgrade (no longer recorded).
 */
async function recordReplays(): Promise<void> {
  if (!wanted('replay-archive-paced') && !wanted('deliver-replayed')) return;
  const s = await system({ replayMaxInFlight: 1 });
  const hook = await receiver(ok);
  const since = new Date(Date.now() - 1_000).toISOString();
  const { source, writeKey } = await s.store.sources.create('record-histories replay-archive');
  const ids = ['record-replay-0', 'record-replay-1', 'record-replay-2'];
  for (const messageId of ids) await send(s.app, writeKey, 'track', { userId: 'u', event: 'Recorded', messageId });
  const destination = await s.store.destinations.create(source.id, { enabled: true, webhooks: [{ url: hook.url, headers: {} }] });
  const auth = { authorization: `Bearer ${s.config.adminToken}` };
  const started = await s.app.inject({ method: 'POST', url: '/admin/replays', headers: auth, payload: { sourceId: source.id, destinationId: destination.id, since, until: new Date(Date.now() + 60_000).toISOString() } });
  if (started.statusCode !== 202) throw new Error(`replay answered ${started.statusCode}: ${started.body}`);
  const { id } = started.json<{ id: string }>();
  await waitFor(() => {
    if (hook.requests.length === 0) throw new Error('no replayed request yet');
  }, 30_000);
  for (const change of ['pause', 'resume']) {
    const answer = await s.app.inject({ method: 'POST', url: `/admin/replays/${id}/${change}`, headers: auth });
    if (answer.statusCode !== 200) throw new Error(`${change} answered ${answer.statusCode}: ${answer.body}`);
  }
  const counts = (await s.client.workflow.getHandle(`replay:${id}`).result()) as { delivered: number };
  if (counts.delivered !== ids.length) throw new Error(`replay: ${JSON.stringify(counts)}`);
  if (wanted('replay-archive-paced')) await save(s.client, 'replay-archive-paced', `replay:${id}`);
  if (wanted('deliver-replayed')) await save(s.client, 'deliver-replayed', `replay:${id}:${ids[0]}`);
}

/** An actions destination, two mappings in one workflow: one accepted at once, one after a 503 (two rounds). */
async function recordActions(): Promise<void> {
  const name = 'deliver-actions-mappings';
  if (!wanted(name)) return;
  const s = await system({ deliveryFirstAttemptLocal: true });
  const hook = await receiver((req) => (req.path.endsWith('/flaky') && !hook.requests.slice(0, -1).some((r) => r.path.endsWith('/flaky')) ? { status: 503 } : { status: 200 }));
  const { source, writeKey } = await s.store.sources.create(`record-histories ${name}`);
  const mapping = (mappingName: string, path: string) => ({ name: mappingName, enabled: true, trigger: 'event = "Recorded"', settings: { url: `${hook.url}${path}`, method: 'POST' as const, headers: {}, data: { event: { '@path': '$.event' } } } });
  await s.store.destinations.create(source.id, { enabled: true, type: 'actions', webhooks: [], mappings: [mapping('Steady', '/steady'), mapping('Flaky', '/flaky')] });
  const messageId = `record-${name}`;
  await send(s.app, writeKey, 'track', { userId: 'u', event: 'Recorded', messageId });
  const result = await deliveryResult(s.client, source.id, messageId);
  if (!result.ok || result.report.destinations[0].mappings?.map((m) => `${m.name} ${m.status} in ${m.rounds}`).join(', ') !== 'Steady delivered in 1, Flaky delivered in 2') throw new Error(`${name}: ${JSON.stringify(result)}`);
  await save(s.client, name, deliveryWorkflowId(source.id, messageId));
}

/**
 * A message accepted with a sender's traceparent while tracing is on, its bodies in the
 * clear (no payload keys), so its input carries the trace context itself and each attempt gets it
 * under the patch `open-trace-context-in-attempts`; a 503 first, so two attempts ask for it. (A
 * sealed input carries it inside its sealed bodies: the same history as an untraced one.)
 */
async function recordTraced(): Promise<void> {
  const name = 'deliver-traced-open';
  if (!wanted(name)) return;
  const otlp = await startOtlpReceiver();
  const stopTracing = await startTracing({ tracesExporter: '', otlpEndpoint: '', otlpTracesEndpoint: otlp.url, otlpTracesProtocol: 'http/json', serviceName: 'record-histories', bspScheduleDelay: 100 }, 'record-histories');
  try {
    const s = await system({ payloadEncryption: false });
    const hook = await receiver((_, n) => ({ status: n === 0 ? 503 : 200 }));
    const { source, writeKey } = await destinationFor(s.store, name, [hook.url]);
    const messageId = `record-${name}`;
    const accepted = await s.app.inject({ method: 'POST', url: '/v1/track', headers: { authorization: basicAuth(writeKey), traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' }, payload: { userId: 'u', event: 'Recorded', messageId } });
    if (accepted.statusCode !== 200) throw new Error(`${name}: /v1/track answered ${accepted.statusCode}`);
    // This client has no payload keys, and the worker's result is encrypted: wait for the run to close instead of reading it.
    const handle = s.client.workflow.getHandle(deliveryWorkflowId(source.id, messageId));
    await waitFor(async () => {
      const { status } = await handle.describe();
      if (status.name !== 'COMPLETED') throw new Error(`${name}: ${status.name}`);
    }, 60_000);
    // The run's worker does not trace (it sends no header): what matters here is the input and the patch's marker.
    const marker = Buffer.from(JSON.stringify({ id: 'open-trace-context-in-attempts', deprecated: false })).toString('base64');
    const patched = historyToJSON(await handle.fetchHistory()).includes(marker);
    if (hook.requests.length !== 2 || !patched) throw new Error(`${name}: ${hook.requests.length} requests; patch marker ${patched ? '' : 'not '}recorded`);
    await save(s.client, name, handle.workflowId);
  } finally {
    await stopTracing?.();
    await otlp.close();
  }
}

async function main(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  process.env.PERSONAS_SYNC_PAGE_SIZE = PERSONAS_SYNC_PAGE_SIZE;
  await globalSetup();
  try {
    await recordDeliveries();
    await recordDeliveryRules();
    await recordFlowControl();
    await recordSyncs();
    await recordRedeliveries();
    await recordReplays();
    await recordActions();
    await recordTraced();
  } finally {
    for (const child of ownWorkers) await stopProcess(child, 'SIGKILL');
    await Promise.all(receivers.map((r) => r.close()));
    for (const s of systems) await s.close();
    await globalTeardown();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
