import { deliveryWorkflowId } from '../../src/delivery/ids';
import { faultDir } from '../helpers/faults';
import { ADMIN_TOKEN, readSource, sourceThrough, startProductionShape, splitAndKillScenario, switchOffScenario, type ProductionShape } from '../helpers/production-shape';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { drillBroken, drillRows, faultDrill } from '../helpers/fault-drill';
import { productionFaults } from '../helpers/production-faults';
import { basicAuth, workflowHistoryText, workflowListText } from '../helpers/system';

/**
 * The production shape on this machine: Temporal's own server v1.32.1 on PostgreSQL
 * with 4 history shards, the store on PostgreSQL, 2 API and 2 worker processes sharing nothing
 * else. Nothing here is the dev server or SQLite: the processes are told a DATA_DIR they cannot
 * create, so a write to local disk would fail them.
 */

const log = (line: string) => process.stdout.write(`${line}\n`);
const MESSAGES = 400;

let shape: ProductionShape;
let receiver: Receiver;
let failing: Receiver;

beforeAll(async () => {
  // Slow enough answers that attempts are in flight when a worker is killed.
  receiver = await startReceiver(() => ({ status: 200, delayMs: 20 }));
  failing = await startReceiver(() => ({ status: 503 }));
  shape = await startProductionShape({ dir: faultDir('production-shape'), shards: 4, taskQueue: `production-shape-${process.pid}` });
}, 600_000);

afterAll(async () => {
  await shape?.close();
  await receiver?.close();
  await failing?.close();
}, 120_000);

it('shares one store: a source created through API 1 is read through API 2', async () => {
  const [api1, api2] = shape.apis;
  const { sourceId } = await sourceThrough(api1, 'shared', receiver.url);
  expect(await readSource(api2, sourceId)).toMatchObject({ id: sourceId, name: 'shared' });
});

it('keeps user data out of the real server: no email, event or user id in `temporal workflow show` or `workflow list` without a codec; the codec server decodes it', async () => {
  // Payload encryption on Temporal's own server and PostgreSQL, as an operator of that cluster reads it.
  const [api1, api2] = shape.apis;
  const canary = { email: 'real-canary-7f3a@example.com', event: 'Real Canary 7f3a', userId: 'real-canary-user-7f3a' };
  const { sourceId, writeKey } = await sourceThrough(api1, 'canary', receiver.url);
  const messageId = `real-canary-${process.pid}`;
  const sent = await fetch(`${api2.url}/v1/track`, {
    method: 'POST',
    headers: { authorization: basicAuth(writeKey), 'content-type': 'application/json' },
    body: JSON.stringify({ messageId, userId: canary.userId, event: canary.event, properties: { email: canary.email }, context: { traits: { email: canary.email } } }),
  });
  expect(sent.status).toBe(200);
  expect(JSON.parse((await receiver.waitForMessage(messageId, 60_000)).body)).toMatchObject({ userId: canary.userId, event: canary.event });
  const workflowId = deliveryWorkflowId(sourceId, messageId);
  const address = shape.temporal.address;

  const history = await workflowHistoryText(workflowId, [], address);
  expect(history).toContain(Buffer.from('binary/encrypted').toString('base64'));
  for (const value of Object.values(canary)) expect(history).not.toContain(value);
  const listed = await workflowListText(`WorkflowId = "${workflowId}"`, address);
  expect(listed).toContain('SwitchyardUserId');
  for (const value of Object.values(canary)) expect(listed).not.toContain(value);

  const decoded = await workflowHistoryText(workflowId, ['--codec-endpoint', `${api1.url}/codec`, '--codec-auth', `Bearer ${ADMIN_TOKEN}`], address);
  expect(decoded).toContain(canary.email);
  expect(decoded).toContain(canary.event);
}, 180_000);

it('stops retries run by either worker once the destination is switched off through API 1', async () => {
  const figures = await switchOffScenario(shape, failing, { messages: 20, log });
  log(`switch off: ${JSON.stringify(figures)}`);
  expect(figures.retryingWorkers).toHaveLength(2);
  expect(figures.attemptsAfterSwitchOff).toBe(0);
  expect(figures.statuses).toEqual(Array(20).fill('stopped'));
}, 300_000);

it(`delivers all ${MESSAGES} messages sent through both APIs when a worker is SIGKILLed mid-run; only attempts in flight arrive twice, unchanged`, async () => {
  const figures = await splitAndKillScenario(shape, receiver, { messages: MESSAGES, log });
  log(`production shape, worker kill: ${JSON.stringify(figures)}`);
  expect(figures.deliveredAtKill).toBeLessThan(MESSAGES);
  expect(figures.lost).toBe(0);
  expect(figures.duplicatedNotInFlight).toBe(0);
  expect(figures.duplicatesThatDiffer).toBe(0);
}, 1_200_000);

it('survives the faults of the matrix in turn under single calls through both APIs — its one PostgreSQL (Temporal\'s and the store\'s) restarted, Temporal\'s server SIGKILLed, an API SIGKILLed mid-request, the workers\' and the APIs\' network to Temporal cut: 503s with Retry-After, never a 500, no process lost, every acknowledged call delivered', async () => {
  const drillReceiver = await startReceiver();
  try {
    const unavailable = (reading: { status: number }) => reading.status === 503;
    // The short version of each fault; `npx tsx scripts/faults.ts production-shape` runs the whole
    // matrix at full length. Here PostgreSQL restarts once, immediate (the harsher: store-restart
    // restarts it both ways), and no receiver hangs (noisy-neighbour's and isolation's do).
    const faults = productionFaults(shape, drillReceiver, { downMs: 2_500, hangMs: 4_000, cutMs: 4_000, shows: unavailable }).filter(
      (fault) => fault.name !== 'PostgreSQL restart (fast)' && !fault.name.startsWith('receiver '),
    );
    expect(faults).toHaveLength(5);
    // The worker-kill test before this one left one worker dead on purpose: the drill watches the living.
    const living = shape.workers.filter((w) => w.process.exitCode === null && w.process.signalCode === null);
    const figures = await faultDrill({ apis: shape.apis, workers: living, receiver: drillReceiver, rate: 10, seconds: 30, faults, log });
    log(`production shape, fault matrix: ${JSON.stringify({ ...figures, faults: undefined })}\n${drillRows(figures).join('\n')}`);
    expect(drillBroken(figures)).toEqual([]);
    expect(figures.acked).toBeGreaterThan(0);
    // The API kill cut calls off mid-request, and their senders' retries were answered.
    expect(figures.connectionErrors).toBeGreaterThan(0);
  } finally {
    await drillReceiver.close();
  }
}, 900_000);
