import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { serveApi } from './api/serve';
import { loadConfig } from './config';
import { Lifecycle, runMain } from './lifecycle';
import { createLogger } from './logger';
import { createMetrics } from './metrics';
import { loadQuickstart } from './quickstart';
import { loadKeyring } from './privacy/load-keyring';
import { openStore } from './store';
import { switchyardDataConverter } from './temporal/data-converter';
import { connectClient } from './temporal/connection';
import { startDevServer } from './temporal/dev-server';
import { devServerListening, embeddedPorts, firstTakenPort, takenPortMessage } from './temporal/embedded-ports';
import { connectWorker, startWorkers } from './temporal/workers';
import { VERSION } from './version';
import { startTracing } from './tracing/tracing';

/** `npm start`: the whole system on embedded defaults — Temporal dev server, worker and API in one command. */
runMain(async () => {
  // Local receivers are the point of a quick start, so loopback is allowed unless the operator says otherwise.
  process.env.EGRESS_ALLOWLIST ??= '127.0.0.0/8,::1/128';
  const config = loadConfig();
  const logger = createLogger(config.logLevel, 'switchyard', config.logFormat);
  const lifecycle = new Lifecycle(logger);
  // Before any Temporal client or worker exists (they would capture a no-op propagator); stopped last, exporting what is left.
  const stopTracing = await startTracing(config, 'switchyard');
  if (stopTracing) lifecycle.opened('tracing', stopTracing, (stop) => stop());
  mkdirSync(config.dataDir, { recursive: true });
  // The quick start's development key lives in DATA_DIR (made on the first start), so it needs no setup.
  const keyring = loadKeyring(config, { createInDataDir: true });

  let ownServerListening: Promise<void> | undefined;
  if (config.embeddedTemporal) {
    // A port already taken is another program's, often another Temporal server: refuse at once
    // rather than hand that server's tasks to this worker (docs/operations.md, the quick start's ports).
    const taken = await firstTakenPort(embeddedPorts(config));
    if (taken) {
      logger.error({ port: taken.port, variable: taken.variable }, takenPortMessage(taken));
      console.error(`Switchyard did not start: ${takenPortMessage(taken)}`);
      process.exit(1);
    }
    const temporalPort = Number(config.temporalAddress.split(':').pop());
    // Its Web UI shows payloads decrypted by this process's codec server (the browser calls it cross-origin).
    const uiOrigins = [`http://localhost:${config.temporalUiPort}`, `http://127.0.0.1:${config.temporalUiPort}`];
    config.codecCorsOrigins = [...new Set([...config.codecCorsOrigins, ...uiOrigins])];
    const devServer = startDevServer({ port: temporalPort, uiPort: config.temporalUiPort, dbFile: path.join(config.dataDir, 'temporal.db'), uiCodecEndpoint: `http://localhost:${config.port}/codec` });
    // Its banner (server, Web UI and metrics addresses) and its warnings are the operator's to see.
    devServer.stdout?.on('data', (chunk: Buffer) => process.stdout.write(chunk));
    devServer.stderr?.on('data', (chunk: Buffer) => process.stderr.write(chunk));
    devServer.on('exit', (code) => {
      logger.error({ code }, 'Temporal dev server exited');
      process.exit(1);
    });
    lifecycle.opened('Temporal dev server', devServer, (server) => {
      server.removeAllListeners('exit');
      server.kill('SIGTERM');
    });
    ownServerListening = devServerListening(devServer);
    // Its exit is handled above; this only keeps the promise from counting as unhandled meanwhile.
    ownServerListening.catch(() => undefined);
  }

  const store = lifecycle.opened('store', await openStore({ ...config, keyring, writeKeyDirectory: true }), (s) => s.close());
  const quickstart = await loadQuickstart(config.dataDir, store, config.adminToken);
  config.adminToken = quickstart.adminToken;
  // The first start of the embedded dev server may build the Temporal CLI from source; allow for it.
  const connectTimeout = config.embeddedTemporal && config.temporalConnectTimeout > 0 ? Math.max(config.temporalConnectTimeout, 15 * 60_000) : config.temporalConnectTimeout;
  if (ownServerListening) {
    // Until its own server says it listens, whatever answers on the port is someone else's (the CLI may still be building).
    logger.info('waiting for the embedded Temporal server to listen before connecting');
    await ownServerListening;
  }
  const client = lifecycle.opened('Temporal client', await connectClient(config, keyring, logger, connectTimeout), (c) => c.connection.close());
  const workerConnection = lifecycle.opened('worker connection', await connectWorker(config, logger, connectTimeout), (c) => c.close());
  // Temporal's runtime also reacts to SIGINT/SIGTERM and may already be draining the workers.
  // One registry for the process: the API's /metrics shows the worker's attempts and deliveries too.
  const metrics = createMetrics();
  lifecycle.opened('workers', await startWorkers(config, store, logger, keyring, workerConnection, metrics), (w) => {
    w.shutdown();
    return w.close();
  });
  // Eager starts need the client on the worker's own connection: Temporal then hands the first
  // workflow task back in the start reply, and a message's first attempt runs without a task queue trip.
  const starter = config.ingestEagerStart ? new Client({ connection: workerConnection, namespace: config.temporalNamespace, dataConverter: switchyardDataConverter(keyring) }) : undefined;
  // The embedded dev server's Web UI decodes through this API's codec server, without a token (loopback only: src/api/codec.ts).
  await serveApi(config, store, logger, lifecycle, { client, starter }, { keyring, codecOpenToLoopback: config.embeddedTemporal }, metrics);

  const api = `http://localhost:${config.port}`;
  console.log(`
Switchyard is running.
  Version         ${VERSION}
  Ingestion API   ${api}/v1/{identify,track,page,screen,group,alias,batch}
  Admin API       ${api}/admin   (Authorization: Bearer ${quickstart.adminToken})
  Portal          ${api}/portal   (log in with the admin token)
  Health          ${api}/health
  Metrics         ${api}/metrics
${config.embeddedTemporal ? `  Temporal Web UI http://localhost:${config.temporalUiPort}/namespaces/${config.temporalNamespace}/workflows\n` : ''}  Write key       ${quickstart.writeKey}   (source ${quickstart.sourceId})

Watch deliveries arrive: in another terminal, run the local receiver (it prints each delivery and checks its signature)
  npm run receiver -- --port 9000 --secret change-me
Add a webhook destination pointing at it:
  curl -s -X POST ${api}/admin/sources/${quickstart.sourceId}/destinations \\
    -H 'Authorization: Bearer ${quickstart.adminToken}' -H 'Content-Type: application/json' \\
    -d '{"enabled":true,"sharedSecret":"change-me","webhooks":[{"url":"http://127.0.0.1:9000/hook"}]}'
Send an event:
  curl -s -u '${quickstart.writeKey}:' ${api}/v1/track -H 'Content-Type: application/json' \\
    -d '{"userId":"u1","event":"Order Completed","properties":{"total":42}}'
`);

  lifecycle.stopOnSignals();
});
