import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { buildApp } from './api/app';
import { loadConfig } from './config';
import { createLogger } from './logger';
import { loadQuickstart } from './quickstart';
import { openStore } from './store';
import { connectClient } from './temporal/connection';
import { temporalDeliveries } from './temporal/deliveries';
import { temporalSyncSchedules } from './temporal/personas-schedules';
import { startDevServer } from './temporal/dev-server';
import { connectWorker, createDeliveryWorker, createPersonasDeliveryWorker } from './temporal/worker';

/** `npm start`: the whole system on embedded defaults — Temporal dev server, worker and API in one command. */
async function main(): Promise<void> {
  // Local receivers are the point of a quick start, so loopback is allowed unless the operator says otherwise.
  process.env.EGRESS_ALLOWLIST ??= '127.0.0.0/8,::1/128';
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  mkdirSync(config.dataDir, { recursive: true });

  const temporalPort = Number(config.temporalAddress.split(':').pop());
  const devServer = config.embeddedTemporal
    ? startDevServer({ port: temporalPort, uiPort: config.temporalUiPort, dbFile: path.join(config.dataDir, 'temporal.db') })
    : undefined;
  // Its banner (server, Web UI and metrics addresses) and its warnings are the operator's to see.
  devServer?.stdout?.on('data', (chunk: Buffer) => process.stdout.write(chunk));
  devServer?.stderr?.on('data', (chunk: Buffer) => process.stderr.write(chunk));
  devServer?.on('exit', (code) => {
    logger.error({ code }, 'Temporal dev server exited');
    process.exit(1);
  });

  const store = await openStore({ databasePath: config.databasePath });
  const quickstart = await loadQuickstart(config.dataDir, store, config.adminToken);
  config.adminToken = quickstart.adminToken;
  // The first start may build the Temporal CLI from source; allow for it.
  const client = await connectClient(config.temporalAddress, config.temporalNamespace, 15 * 60_000);
  const workerConnection = await connectWorker(config, logger);
  const worker = await createDeliveryWorker(config, store, logger, config.temporalTaskQueue, workerConnection);
  const personasWorker = await createPersonasDeliveryWorker(config, store, logger, workerConnection);
  const workerRun = Promise.all([worker.run(), personasWorker.run()]);
  // Eager starts need the client on the worker's own connection: Temporal then hands the first
  // workflow task back in the start reply, and a message's first attempt runs without a task queue trip.
  const starter = config.ingestEagerStart ? new Client({ connection: workerConnection, namespace: config.temporalNamespace }) : client;
  const deliveries = temporalDeliveries(starter, config.temporalTaskQueue, config.ingestStartConcurrency, config.ingestEagerStart);
  const app = await buildApp({ config, store, deliveries, schedules: temporalSyncSchedules(client, config.temporalTaskQueue), logger });
  await app.listen({ port: config.port, host: config.host });

  const api = `http://localhost:${config.port}`;
  console.log(`
Switchyard is running.
  Ingestion API   ${api}/v1/{identify,track,page,screen,group,alias,batch}
  Admin API       ${api}/admin   (Authorization: Bearer ${quickstart.adminToken})
  Health          ${api}/health
  Temporal Web UI http://localhost:${config.temporalUiPort}/namespaces/${config.temporalNamespace}/workflows
  Write key       ${quickstart.writeKey}   (source ${quickstart.sourceId})

Add a webhook destination:
  curl -s -X POST ${api}/admin/sources/${quickstart.sourceId}/destinations \\
    -H 'Authorization: Bearer ${quickstart.adminToken}' -H 'Content-Type: application/json' \\
    -d '{"enabled":true,"sharedSecret":"change-me","webhooks":[{"url":"http://127.0.0.1:9000/hook"}]}'
Send an event:
  curl -s -u '${quickstart.writeKey}:' ${api}/v1/track -H 'Content-Type: application/json' \\
    -d '{"userId":"u1","event":"Order Completed","properties":{"total":42}}'
`);

  const stop = async () => {
    await app.close();
    // Temporal's runtime also reacts to SIGINT/SIGTERM and may already be draining the worker.
    for (const w of [worker, personasWorker]) if (w.getState() === 'RUNNING') w.shutdown();
    await workerRun;
    await client.connection.close();
    await workerConnection.close();
    await store.close();
    devServer?.removeAllListeners('exit');
    devServer?.kill('SIGTERM');
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
