import { serveApi } from './api/serve';
import { loadConfig } from './config';
import { Lifecycle, runMain } from './lifecycle';
import { createLogger } from './logger';
import { loadKeyring } from './privacy/load-keyring';
import { openStore } from './store';
import { connectClient } from './temporal/connection';
import { startTracing } from './tracing/tracing';

/** Entry point: the HTTP API. SIGTERM stops accepting, lets in-flight requests finish, then exits. */
runMain(async () => {
  const config = loadConfig();
  if (!config.adminToken) throw new Error('ADMIN_TOKEN is required (the admin API has no other protection)');
  // Before anything opens: without keys (and PAYLOAD_ENCRYPTION=off not set) this stops, naming PAYLOAD_KEYS.
  const keyring = loadKeyring(config);
  const logger = createLogger(config.logLevel, 'switchyard-api', config.logFormat);
  const lifecycle = new Lifecycle(logger);
  // Before the Temporal client exists (it would capture a no-op propagator); stopped last, exporting what is left.
  const stopTracing = await startTracing(config, 'switchyard-api');
  if (stopTracing) lifecycle.opened('tracing', stopTracing, (stop) => stop());
  const store = lifecycle.opened('store', await openStore({ ...config, keyring, writeKeyDirectory: true }), (s) => s.close());
  const client = lifecycle.opened('Temporal client', await connectClient(config, keyring, logger), (c) => c.connection.close());
  await serveApi(config, store, logger, lifecycle, { client }, { keyring });
  lifecycle.stopOnSignals();
});
