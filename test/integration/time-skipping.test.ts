import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { WorkflowFailedError } from '@temporalio/client';
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes';
import { temporal } from '@temporalio/proto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type WorkflowBundle } from '@temporalio/worker';
import { createActivities } from '../../src/activities';
import { deliveryPolicy, loadConfig, type Config } from '../../src/config';
import { nextBackoff } from '../../src/delivery/backoff';
import { deliveryWorkflowId } from '../../src/delivery/ids';
import type { DeliveryInput, DeliveryPolicy, DeliveryReport } from '../../src/delivery/types';
import { identifierHash } from '../../src/privacy/keyring';
import { ENCRYPTED_ENCODING } from '../../src/privacy/payload-codec';
import { sealBody } from '../../src/privacy/sealed-body';
import { openStore } from '../../src/store';
import type { Store } from '../../src/store/types';
import { switchyardDataConverter } from '../../src/temporal/data-converter';
import { bundleWorkflows } from '../../src/temporal/workflow-bundle';
import { ALL_SEARCH_ATTRIBUTES } from '../../src/workflows/search-attributes';
import { testKeyring } from '../helpers/payload-keys';
import { ROOT } from '../helpers/processes';
import { startReceiver, type Receiver, type Responder } from '../helpers/receiver';

/**
 * The real retry window (seed: 4 hours) and a long Retry-After, in seconds of wall time: the real
 * deliverMessage workflow and the real activities, against a real receiver and a real SQLite store,
 * on Temporal's time-skipping test server, which jumps the clock whenever the workflow only waits
 * on a timer. The server is the Java io.temporal:temporal-test-server from Maven Central, fetched
 * once into .tools/ by scripts/temporal-test-server.sh (needs java and mvn).
 */

const run = promisify(execFile);
const HOUR = 3_600_000;
const taskQueue = `time-skipping-${process.pid}`;
const keyring = testKeyring();

let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;
let store: Store;
let config: Config;
const receivers: Receiver[] = [];

async function testServer(): Promise<string> {
  try {
    const { stdout } = await run('bash', [path.join(ROOT, 'scripts/temporal-test-server.sh'), 'ensure']);
    return stdout.trim();
  } catch (err) {
    throw new Error(`the time-skipping test server is not available: ${(err as { stderr?: string }).stderr || (err as Error).message}`);
  }
}

beforeAll(async () => {
  // Encrypted as in production: the codec, the failure converter and a sealed body.
  env = await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: await testServer() } }, client: { dataConverter: switchyardDataConverter(keyring) } });
  // The workflow sets SwitchyardStatus; the test server, like a production namespace, needs it registered.
  await env.connection.operatorService.addSearchAttributes({
    namespace: env.namespace ?? 'default',
    searchAttributes: Object.fromEntries(ALL_SEARCH_ATTRIBUTES.map((key) => [key.name, encodeSearchAttributeIndexedValueType(key.type)!])),
  });
  bundle = await bundleWorkflows();
  // The seed's delivery timing, whatever the test run's environment sets for its short-window tests.
  config = loadConfig(process.env, { deliveryRetryWindow: 4 * HOUR, deliveryTimeout: 5_000, deliveryInitialBackoff: 1_000, deliveryMaxBackoff: 10 * 60_000 });
  store = await openStore({ databasePath: path.join(process.env.SWITCHYARD_TEST_DIR ?? path.join(ROOT, '.test-data'), `time-skipping-${process.pid}.db`), keyring });
}, 180_000);

afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await store?.close();
  await env?.teardown();
});

/** Runs one message to one destination whose only webhook URL answers as `responder` says, on the real worker code. */
async function deliver(name: string, responder: Responder) {
  const receiver = await startReceiver(responder);
  receivers.push(receiver);
  const { source } = await store.sources.create(`time-skipping ${name}`);
  const destination = await store.destinations.create(source.id, { enabled: true, webhooks: [{ url: receiver.url, headers: {} }] });
  // With flow control: holds are waits the activity answers relative to the store's
  // clock, timed by the workflow's own, so the store's clock (which time skipping does not move)
  // cannot hold a delivery past a wait it has already made.
  const policy = deliveryPolicy(config);
  expect(policy.maxHoldMs).toBeDefined();
  const messageId = `time-skipping-${name}`;
  const subject = identifierHash(keyring, 'userId', 'u');
  const dataKey = (await store.dataKeys.getOrCreate([subject])).get(subject)!;
  const sealedMessage = sealBody(dataKey, subject, messageId, { type: 'track', messageId, userId: 'u', event: 'Order Completed' });
  const input: DeliveryInput = { sourceId: source.id, messageId, type: 'track', visibleIds: { userId: subject }, destinationIds: [destination.id], sealedMessage, policy };

  const unused = () => Promise.reject(new Error('deliverMessage starts no workflows, deletes no schedules and reads no other runs'));
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: bundle,
    dataConverter: switchyardDataConverter(keyring),
    activities: createActivities(store, config, { startDelivery: unused, schedules: { delete: unused }, redeliveries: { page: unused, latest: unused, input: unused, redeliver: unused, closed: unused }, keyring }),
  });
  const handle = await env.client.workflow.start('deliverMessage', { taskQueue, workflowId: deliveryWorkflowId(source.id, messageId), args: [input] });
  const outcome = await worker.runUntil(handle.result().then(
    (report) => ({ ok: true as const, report: report as DeliveryReport }),
    (err: unknown) => {
      if (!(err instanceof WorkflowFailedError)) throw err;
      const cause = err.cause as { message: string; details?: unknown[] };
      return { ok: false as const, message: cause.message, report: cause.details?.[0] as DeliveryReport };
    },
  ));
  // Each wait between rounds is one timer in history, with the delay the workflow chose. Workflow
  // time comes from history too: once nothing is pending, the server skips ahead by years.
  const history = await handle.fetchHistory();
  const events = history.events ?? [];
  const at = (e: (typeof events)[number] | undefined) => Number(e?.eventTime?.seconds ?? 0) * 1000 + Math.round((e?.eventTime?.nanos ?? 0) / 1e6);
  const elapsedMs = at(events[events.length - 1]) - at(events[0]);
  const waits = events
    .map((e) => e.timerStartedEventAttributes?.startToFireTimeout)
    .filter((d) => d != null)
    .map((d) => Number(d.seconds ?? 0) * 1000 + Math.round((d.nanos ?? 0) / 1e6));
  // As Temporal stores it: fetchHistory does not run the codec.
  const historyBytes = Buffer.from(temporal.api.history.v1.History.encode(history).finish());
  // The encoding of every input and result payload: the workflow's, and each attempt's.
  const encodings = events
    .flatMap((e) => [e.workflowExecutionStartedEventAttributes?.input, e.activityTaskScheduledEventAttributes?.input, e.activityTaskCompletedEventAttributes?.result, e.workflowExecutionFailedEventAttributes?.failure?.encodedAttributes && { payloads: [e.workflowExecutionFailedEventAttributes.failure.encodedAttributes] }])
    .flatMap((payloads) => payloads?.payloads ?? [])
    .map((payload) => Buffer.from(payload.metadata?.encoding ?? []).toString());
  return { outcome, receiver, policy, waits, elapsedMs, historyBytes, encodings };
}

/** The shortest and longest wait before round `round + 1` that the backoff policy allows (jitter spans [0, 1)). */
const waitBounds = (round: number, policy: DeliveryPolicy) => [nextBackoff(round, policy, 0), nextBackoff(round, policy, 1)];

/** Rounds in the retry window if every jitter draw were `random`. */
function roundsWithin(policy: DeliveryPolicy, random: number): number {
  let waited = 0;
  for (let round = 1; ; round++) {
    const wait = nextBackoff(round, policy, random);
    if (waited + wait >= policy.retryWindowMs) return round;
    waited += wait;
  }
}

it('retries a webhook that always answers 503 for the whole 4-hour window, rounds spaced as the backoff policy says, then fails', async () => {
  const { outcome, receiver, policy, waits, elapsedMs, historyBytes, encodings } = await deliver('window', () => ({ status: 503 }));

  expect(outcome.ok).toBe(false);
  expect(outcome.ok || outcome.message).toMatch(/retry window exhausted/);
  const rounds = outcome.report.destinations[0].rounds;
  // One POST per round, and one wait between two rounds. Each POST carries the opened body; the
  // history (read without the codec) holds neither the event nor the user id.
  expect(receiver.requests).toHaveLength(rounds);
  for (const request of receiver.requests) expect(JSON.parse(request.body)).toMatchObject({ event: 'Order Completed', userId: 'u' });
  expect(historyBytes.includes('Order Completed')).toBe(false);
  expect(historyBytes.includes('"userId":"u"')).toBe(false);
  expect(encodings).toEqual(expect.arrayContaining([ENCRYPTED_ENCODING]));
  expect(encodings.every((encoding) => encoding === ENCRYPTED_ENCODING)).toBe(true);
  expect(waits).toHaveLength(rounds - 1);
  waits.forEach((wait, i) => {
    const [shortest, longest] = waitBounds(i + 1, policy);
    expect(wait).toBeGreaterThanOrEqual(shortest);
    expect(wait).toBeLessThanOrEqual(longest);
  });
  // The last round started inside the window, and the next wait would have passed its end.
  const waited = waits.reduce((a, b) => a + b, 0);
  expect(waited).toBeLessThan(policy.retryWindowMs);
  expect(waited + policy.maxBackoffMs).toBeGreaterThanOrEqual(policy.retryWindowMs);
  expect(elapsedMs).toBeGreaterThanOrEqual(policy.retryWindowMs - policy.maxBackoffMs);
  expect(elapsedMs).toBeLessThan(policy.retryWindowMs);
  // Exponential from 1 s up to the 10-minute cap, then 5-10 minutes each: between the rounds that
  // always-longest and always-shortest waits would fit into 4 hours (33 and 57).
  expect(rounds).toBeGreaterThanOrEqual(roundsWithin(policy, 1));
  expect(rounds).toBeLessThanOrEqual(roundsWithin(policy, 0));
}, 300_000);

it('honours a Retry-After of 2 hours, longer than any backoff, before the next round', async () => {
  const { outcome, receiver, waits, elapsedMs } = await deliver('retry-after', (_req, n) => (n === 0 ? { status: 503, headers: { 'retry-after': String(2 * 3600) } } : { status: 200 }));

  expect(outcome).toMatchObject({ ok: true, report: { destinations: [{ status: 'delivered', rounds: 2 }] } });
  expect(receiver.requests).toHaveLength(2);
  expect(waits).toEqual([2 * HOUR]);
  expect(elapsedMs).toBeGreaterThanOrEqual(2 * HOUR);
}, 300_000);
