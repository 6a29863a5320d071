import { DefaultLogger, NativeConnection, Runtime, Worker, makeTelemetryFilterString } from '@temporalio/worker';
import { loadConfig } from '../../src/config';
import { loadKeyring } from '../../src/privacy/load-keyring';
import { switchyardDataConverter } from '../../src/temporal/data-converter';
import { workerTuning } from '../../src/temporal/workers';
import { bareActivities, ran } from './activities';

/**
 * The bare-Temporal reference worker: a child process of the bench, on the bench's Temporal server,
 * with the same worker tuning as Switchyard's delivery worker, polling its own task queue.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  Runtime.install({
    logger: new DefaultLogger('WARN'),
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'WARN' }) } },
  });
  const connection = await NativeConnection.connect({ address: config.temporalAddress });
  const worker = await Worker.create({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: config.temporalTaskQueue,
    workflowsPath: require.resolve('./workflows'),
    // The same codec as Switchyard's worker, so the reference pays what every Temporal payload costs.
    dataConverter: switchyardDataConverter(loadKeyring(config)),
    activities: bareActivities,
    ...workerTuning(config),
  });
  const flush = setInterval(() => {
    if (ran.length > 0) process.send?.({ receipts: ran.splice(0) });
  }, 50);
  process.on('disconnect', () => worker.shutdown());
  await worker.run();
  clearInterval(flush);
  await connection.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
