import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Interceptor } from '@grpc/grpc-js';
import type { Payload } from '@temporalio/common';
import { WorkflowFailedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/api/app';
import { operationalTaskQueue, temporalOperationalEvents } from '../../src/temporal/operational-events';
import { loadConfig, type Config } from '../../src/config';
import { deliveryWorkflowId } from '../../src/delivery/ids';
import { forwardingJobId } from '../../src/messages/forwarding-job';
import type { DeliveryReport } from '../../src/delivery/types';
import { loadKeyring } from '../../src/privacy/load-keyring';
import type { Keyring } from '../../src/privacy/keyring';
import { openStore } from '../../src/store';
import type { NewDestination, Store } from '../../src/store/types';
import { connectClient } from '../../src/temporal/connection';
import { deliveriesOptions, temporalDeliveries } from '../../src/temporal/temporal-deliveries';
import { temporalSyncSchedules } from '../../src/temporal/temporal-sync-schedules';
import { temporalReplays } from '../../src/temporal/replays';
import type { History } from './histories';
import { ROOT, waitFor } from './processes';
import { startReceiver, type Receiver } from './receiver';

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';

/** Short windows so retry behaviour shows in seconds, not hours. */
export const FAST_DELIVERY: Partial<Config> = {
  deliveryRetryWindow: 20_000,
  deliveryTimeout: 2_000,
  deliveryInitialBackoff: 200,
  deliveryMaxBackoff: 1_000,
};

export interface TestSystem {
  app: FastifyInstance;
  store: Store;
  client: Client;
  config: Config;
  /** The run's test key (test/fixtures/payload-keys), as the worker process has it. */
  keyring: Keyring | undefined;
  close(): Promise<void>;
}

/**
 * The real API (in-process, driven with inject) on the run's real Temporal server and store; the worker is the run's worker process.
 * `temporalInterceptors` see every gRPC call the API's client sends (e.g. to count them).
 */
export async function startSystem(overrides: Partial<Config> = {}, temporalInterceptors: Interceptor[] = []): Promise<TestSystem> {
  const config = loadConfig(process.env, { adminToken: ADMIN_TOKEN, ...FAST_DELIVERY, ...overrides });
  const keyring = loadKeyring(config);
  const store = await openStore({ ...config, keyring, writeKeyDirectory: true });
  const client = await connectClient(config, keyring, undefined, undefined, temporalInterceptors);
  const app = await buildApp({ config, store, deliveries: temporalDeliveries(client, deliveriesOptions(config, keyring)), schedules: temporalSyncSchedules(client, config.temporalTaskQueue), replays: temporalReplays(client, config.temporalTaskQueue), operationalEvents: temporalOperationalEvents(client, store, operationalTaskQueue(config.temporalTaskQueue), { windowMs: config.operationalEventWindow }), keyring });
  await app.ready();
  return {
    app,
    store,
    client,
    config,
    keyring,
    async close() {
      await app.close();
      await client.connection.close();
      await store.close();
    },
  };
}

/**
 * A test file's system and receiver: started before its tests (handed to `ready`), closed after
 * them together with any receivers the file collects in `alsoClose`.
 */
export function useSystem(ready: (system: TestSystem, receiver: Receiver) => void, options: { overrides?: Partial<Config>; alsoClose?: Receiver[] } = {}): void {
  let system: TestSystem | undefined;
  let receiver: Receiver | undefined;
  beforeAll(async () => {
    system = await startSystem(options.overrides);
    receiver = await startReceiver();
    ready(system, receiver);
  });
  afterAll(async () => {
    await Promise.all([receiver, ...(options.alsoClose ?? [])].filter((r) => r !== undefined).map((r) => r.close()));
    await system?.close();
  });
}

/** A source with one destination; returns the write key for the ingestion API. */
export async function sourceWithDestination(store: Store, destination: Partial<NewDestination> & Pick<NewDestination, 'webhooks'>) {
  const { source, writeKey } = await store.sources.create(`test ${expect.getState().currentTestName ?? ''}`.slice(0, 200));
  const created = await store.destinations.create(source.id, { enabled: true, ...destination });
  return { source, writeKey, destination: created };
}

export const basicAuth = (writeKey: string) => `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`;

/** A `/v1/batch` body of one track call per messageId. */
export const trackBatch = (messageIds: string[]) => ({ batch: messageIds.map((messageId) => ({ type: 'track', userId: 'u', event: 'Test', messageId })) });

/** POSTs a batch of track calls to the ingestion API, whatever it answers. */
export const postTrackBatch = (app: FastifyInstance, writeKey: string, messageIds: string[]) =>
  app.inject({ method: 'POST', url: '/v1/batch', headers: { authorization: basicAuth(writeKey) }, payload: trackBatch(messageIds) });

/** POSTs one call to the ingestion API and expects 200. */
export async function send(app: FastifyInstance, writeKey: string, type: string, body: Record<string, unknown>) {
  const response = await app.inject({ method: 'POST', url: `/v1/${type}`, headers: { authorization: basicAuth(writeKey) }, payload: body });
  if (response.statusCode !== 200) throw new Error(`/v1/${type} answered ${response.statusCode}: ${response.body}`);
  return response;
}

export type DeliveryResult = { ok: true; report: DeliveryReport } | { ok: false; message: string; report?: DeliveryReport };

/** Waits for a message's delivery workflow to close and returns how it ended. */
export async function deliveryResult(client: Client, sourceId: string, messageId: string): Promise<DeliveryResult> {
  const handle = client.workflow.getHandle(deliveryWorkflowId(sourceId, messageId));
  try {
    return { ok: true, report: (await handle.result()) as DeliveryReport };
  } catch (err) {
    if (!(err instanceof WorkflowFailedError)) throw err;
    const cause = err.cause as { message?: string; details?: unknown[] } | undefined;
    return { ok: false, message: cause?.message ?? err.message, report: cause?.details?.[0] as DeliveryReport | undefined };
  }
}

const run = promisify(execFile);

/** Payloads in `--output json` are base64: decode every `data` field so a search sees their contents. */
function withDecodedPayloads(json: string): string {
  const decoded: string[] = [];
  JSON.parse(json, (key, value) => {
    if (key === 'data' && typeof value === 'string') decoded.push(Buffer.from(value, 'base64').toString('utf8'));
    return value;
  });
  return `${json}\n${decoded.join('\n')}`;
}

/**
 * `temporal workflow show` for a workflow, payloads' base64 opened: what anyone with Web UI access
 * can read in history (without a codec server; `cliArgs` may add `--codec-endpoint`, `--codec-auth`).
 */
export async function workflowHistoryText(workflowId: string, cliArgs: string[] = [], address = process.env.TEMPORAL_ADDRESS!): Promise<string> {
  const { stdout: cli } = await run('bash', [`${ROOT}/scripts/temporal-dev.sh`, 'ensure']);
  const { stdout } = await run(cli.trim(), ['workflow', 'show', '--workflow-id', workflowId, '--address', address, '--output', 'json', ...cliArgs], { maxBuffer: 64 * 1024 * 1024 });
  return withDecodedPayloads(stdout);
}

/** The system's API listening on loopback (once), for a client outside this process such as the `temporal` CLI. */
export async function listening(system: TestSystem): Promise<string> {
  if (!system.app.server.listening) await system.app.listen({ port: 0, host: '127.0.0.1' });
  const address = system.app.server.address();
  if (address === null || typeof address === 'string') throw new Error('the API listens on no TCP port');
  return `http://127.0.0.1:${address.port}`;
}

/** What an operator with the admin token reads: `workflowHistoryText` through the system's codec server. */
export async function decodedWorkflowHistoryText(system: TestSystem, workflowId: string): Promise<string> {
  const api = await listening(system);
  return workflowHistoryText(workflowId, ['--codec-endpoint', `${api}/codec`, '--codec-auth', `Bearer ${ADMIN_TOKEN}`]);
}

/**
 * `temporal workflow list --query` as JSON, without a codec: what anyone who can read Temporal's
 * visibility (the Web UI's list, the CLI) sees of the matching workflows.
 */
export async function workflowListText(query: string, address = process.env.TEMPORAL_ADDRESS!): Promise<string> {
  const { stdout: cli } = await run('bash', [`${ROOT}/scripts/temporal-dev.sh`, 'ensure']);
  const { stdout } = await run(cli.trim(), ['workflow', 'list', '--query', query, '--address', address, '--output', 'json'], { maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

/** A workflow's start input payloads, decoded by the system's codec server as the Web UI or the CLI asks for them (sealed bodies opened with the user's data key, or `[erased]`). */
export async function codecDecodedStartInput(system: TestSystem, history: History): Promise<unknown[]> {
  const payloads = history.events![0].workflowExecutionStartedEventAttributes!.input!.payloads! as Payload[];
  const body = {
    payloads: payloads.map(({ metadata, data }) => ({
      metadata: Object.fromEntries(Object.entries(metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
      data: Buffer.from(data ?? []).toString('base64'),
    })),
  };
  const reply = await system.app.inject({ method: 'POST', url: '/codec/decode', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: body });
  if (reply.statusCode !== 200) throw new Error(`/codec/decode answered ${reply.statusCode}: ${reply.body}`);
  return reply.json<{ payloads: { data: string }[] }>().payloads.map((p) => JSON.parse(Buffer.from(p.data, 'base64').toString('utf8')) as unknown);
}

/**
 * Waits for a tracking plan's forwarding job to end: the page of forwarded calls with these
 * messageIds, in order, into `targetSourceId` (messages/forwarding-job.ts). After it, every
 * delivery the page started exists, and one it did not start never will.
 */
export async function forwardingJobDone(client: Client, targetSourceId: string, messageIds: string[]): Promise<void> {
  const handle = client.workflow.getHandle(forwardingJobId(targetSourceId, messageIds.map((messageId) => ({ messageId }))));
  await waitFor(() => handle.describe(), 30_000);
  await handle.result();
}

/** Whether the message's delivery workflow exists (a blocked or filtered call starts none). */
export async function hasDeliveryWorkflow(client: Client, sourceId: string, messageId: string): Promise<boolean> {
  try {
    await client.workflow.getHandle(deliveryWorkflowId(sourceId, messageId)).describe();
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}
