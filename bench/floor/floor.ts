import { createServer, type IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, makeTelemetryFilterString, NativeConnection, Runtime, Worker, type InjectedSinks } from '@temporalio/worker';
import { deliveryPolicy, loadConfig } from '../../src/config';
import type { DeliveryInput, MessageBody } from '../../src/delivery/types';
import { inParallel } from '../../src/in-parallel';
import { loadKeyring } from '../../src/privacy/load-keyring';
import { switchyardDataConverter } from '../../src/temporal/data-converter';
import { startDeliveryWorkflow } from '../../src/temporal/start-delivery';
import { workerTuning } from '../../src/temporal/workers';
import { designFloorActivities, ran } from './design-activities';
import type { FloorSinks } from './workflows';

/**
 * The bench's floor reference (`floor` in the results): the empty workflow of ./workflows.ts,
 * started the way Switchyard's ingestion API starts a delivery, without anything Switchyard does
 * besides (write-key lookup, validation, the store, the signed POST).
 *   FLOOR_ROLE=worker    a worker with Switchyard's tuning on its own task queue
 *   FLOOR_ROLE=api       POST /v1/batch (or a single call) starts one workflow per message, INGEST_START_CONCURRENCY at a time
 *   FLOOR_ROLE=combined  both in one process, starts eager on the worker's connection (as npm start)
 * FLOOR_SOURCE_ID and FLOOR_DESTINATION_ID are the ids the workflows are started with.
 * FLOOR_SHAPE=design runs the design floor instead (`design-floor` in the results, ./design-workflows.ts):
 * the same workflow calling one no-op local activity, the least a workflow that calls an activity costs.
 */
const role = process.env.FLOOR_ROLE ?? 'combined';
const design = process.env.FLOOR_SHAPE === 'design';
const config = loadConfig();
// The same codec as Switchyard's (the floor is Temporal's cost for the same payloads).
const keyring = loadKeyring(config);
const policy = deliveryPolicy(config);
const sourceId = process.env.FLOOR_SOURCE_ID ?? 'src_00000000000000000000000000000000';
const destinationIds = [process.env.FLOOR_DESTINATION_ID ?? 'dst_00000000000000000000000000000000'];

/** When each empty workflow ran, reported to the bench like the receiver's receipts. */
const seen: [string, number][] = [];

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function inputOf(message: MessageBody & { messageId: string; userId?: string }): DeliveryInput {
  return { sourceId, messageId: message.messageId, type: message.type, ...(message.userId && { userId: message.userId }), destinationIds, message, policy };
}

/** The ingestion API's shape of work: parse the batch, start every message's workflow, answer 200 when all are durable. */
function serve(client: Client, eager: boolean): void {
  const server = createServer((request, response) => {
    void (async () => {
      try {
        // POST /v1/batch carries `batch`; a single call (/v1/track) is the message itself.
        const body = JSON.parse(await readBody(request)) as { batch?: (MessageBody & { messageId: string; userId?: string })[] };
        const batch = body.batch ?? [body as MessageBody & { messageId: string; userId?: string }];
        // No keyring: the floor is Temporal's own cost, without Switchyard's hashing or encryption.
        await inParallel(batch, config.ingestStartConcurrency, async (message) => void (await startDeliveryWorkflow(client, config.temporalTaskQueue, undefined, inputOf(message), eager)));
        response.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true}');
      } catch (err) {
        response.writeHead(500).end(String(err));
      }
    })();
  });
  server.listen(config.port, config.host);
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN'), telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'WARN' }) } } });
  if (role === 'api') {
    serve(new Client({ connection: await Connection.connect({ address: config.temporalAddress }), namespace: config.temporalNamespace, dataConverter: switchyardDataConverter(keyring) }), false);
    // An exit of its own, so --cpu-prof writes the API's profile (a signal's default ends it without one).
    process.once('SIGTERM', () => process.exit(0));
    return;
  }
  const connection = await NativeConnection.connect({ address: config.temporalAddress });
  const sinks: InjectedSinks<FloorSinks> = {
    floor: { seen: { fn: (_info, messageId) => void seen.push([messageId, performance.timeOrigin + performance.now()]), callDuringReplay: false } },
  };
  const worker = await Worker.create({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: config.temporalTaskQueue,
    workflowsPath: require.resolve(design ? './design-workflows' : './workflows'),
    ...(design && { activities: designFloorActivities }),
    dataConverter: switchyardDataConverter(keyring),
    sinks,
    ...workerTuning(config),
  });
  const flush = setInterval(() => {
    if (seen.length > 0) process.send?.({ receipts: seen.splice(0) });
    if (ran.length > 0) process.send?.({ receipts: ran.splice(0) });
  }, 50);
  if (role === 'combined') serve(new Client({ connection, namespace: config.temporalNamespace, dataConverter: switchyardDataConverter(keyring) }), config.ingestEagerStart);
  process.on('disconnect', () => worker.shutdown());
  await worker.run();
  clearInterval(flush);
  await connection.close();
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
