/**
 * The fault scenarios of test/integration/faults.test.ts and isolation.test.ts at full size, on a
 * Temporal dev server, worker and API processes of this script's own. Prints each scenario's
 * figures as JSON; docs/reliability.md records a run.
 *
 *   npx tsx scripts/faults.ts                       all scenarios, full size
 *   npx tsx scripts/faults.ts worker-kill --messages 5000
 *   npx tsx scripts/faults.ts isolation --minutes 3
 *   npx tsx scripts/faults.ts store-restart --runs 10 --seconds 40
 *   npx tsx scripts/faults.ts network-cut --cut-seconds 30
 *   npx tsx scripts/faults.ts production-shape --cut-seconds 30
 *
 * Scenarios: worker-kill, api-kill, temporal-restart, isolation, network-cut (the worker's, then the API's network
 * to Temporal cut under 15 single calls/s), store-restart (Switchyard's store
 * PostgreSQL restarted immediate then fast under 15 single calls/s; `--runs` repeats it, each run
 * on a new PostgreSQL, and the script exits 1 unless every run kept every rule), production-shape
 * (Temporal's server v1.32.1 and the store on one PostgreSQL, 2 APIs, 2 workers: every fault of
 * test/helpers/production-faults.ts in turn under 15 single calls/s, cuts and the receiver's hang
 * `--cut-seconds` long; exits 1 unless the drill kept every rule).
 */
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { faultDir, startOwnTemporal, startOwnWorker, stopProcess } from '../test/helpers/faults';
import { TEST_PAYLOAD_KEYS_FILE } from '../test/helpers/payload-keys';
import { ROOT } from '../test/helpers/processes';
import { apiKillScenario, isolationScenario, temporalRestartScenario, workerKillScenario } from '../test/helpers/scenarios';
import { drillBroken, drillRows } from '../test/helpers/fault-drill';
import { networkCutScenario } from '../test/helpers/network-cut-scenario';
import { storeRestartScenario } from '../test/helpers/store-restart-scenario';
import { productionShapeDrill } from '../test/helpers/production-faults';

const SCENARIOS = ['worker-kill', 'api-kill', 'temporal-restart', 'isolation', 'store-restart', 'network-cut', 'production-shape'] as const;

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
}

const log = (line: string) => process.stderr.write(`${new Date().toISOString()} ${line}\n`);

async function main(): Promise<void> {
  const chosen = process.argv.slice(2).filter((a) => (SCENARIOS as readonly string[]).includes(a));
  const run = chosen.length > 0 ? chosen : [...SCENARIOS];

  // The same environment the jest global setup gives the tests: one dev server, one store, one
  // worker on the default task queue (the api-kill scenario's API starts workflows there).
  const dir = path.join(ROOT, '.test-data', `faults-script-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  Object.assign(process.env, {
    SWITCHYARD_TEST_DIR: dir,
    DATA_DIR: dir,
    DATABASE_PATH: path.join(dir, 'switchyard.db'),
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_TASK_QUEUE: 'faults-base',
    EGRESS_ALLOWLIST: '127.0.0.0/8,::1/128',
    LOG_LEVEL: 'info',
    // The test key, as in the jest run: every process of the script encrypts payloads with it.
    PAYLOAD_KEYS_FILE: TEST_PAYLOAD_KEYS_FILE,
  });
  const temporal = await startOwnTemporal(dir);
  process.env.TEMPORAL_ADDRESS = temporal.address;
  const children: ChildProcess[] = [temporal.process];
  try {
    const base = await startOwnWorker({}, path.join(dir, 'base-worker.log'));
    children.push(base.process);
    const results: Record<string, unknown> = {};
    for (const scenario of run) {
      log(`scenario ${scenario}`);
      const started = Date.now();
      if (scenario === 'worker-kill') results[scenario] = await workerKillScenario({ messages: option('messages', 5_000), dir: faultDir('worker-kill'), log });
      if (scenario === 'api-kill') results[scenario] = await apiKillScenario({ batches: option('batches', 300), batchSize: 10, dir: faultDir('api-kill'), log });
      if (scenario === 'temporal-restart') results[scenario] = await temporalRestartScenario({ messages: option('restart-messages', 2_000), dir: faultDir('temporal-restart'), log });
      if (scenario === 'store-restart') {
        const runs = [];
        for (let run = 1; run <= option('runs', 1); run++) {
          const figures = await storeRestartScenario({ dir: faultDir('store-restart'), rate: option('rate', 15), seconds: option('seconds', 40), restarts: ['immediate', 'fast'], downMs: option('down-ms', 2_500), log });
          const broken = drillBroken(figures);
          log(`store-restart run ${run}: ${broken.length === 0 ? 'kept every rule' : broken.join('; ')} ${JSON.stringify(figures)}`);
          runs.push({ figures, broken });
        }
        results[scenario] = runs;
        if (runs.some((r) => r.broken.length > 0)) process.exitCode = 1;
      }
      if (scenario === 'network-cut') {
        const figures = await networkCutScenario({ dir: faultDir('network-cut'), rate: option('rate', 15), seconds: option('seconds', 100), cutMs: option('cut-seconds', 30) * 1000, log });
        const broken = drillBroken(figures);
        log(`network-cut: ${broken.length === 0 ? 'kept every rule' : broken.join('; ')}`);
        results[scenario] = { figures, broken };
        if (broken.length > 0) process.exitCode = 1;
      }
      if (scenario === 'production-shape') {
        const cutMs = option('cut-seconds', 30) * 1000;
        // A short folder name: PostgreSQL's socket path under it must stay within 107 bytes.
        const figures = await productionShapeDrill({ dir: faultDir('ps'), rate: option('rate', 15), seconds: option('seconds', 240), downMs: option('down-ms', 2_500), hangMs: cutMs, cutMs, log });
        const broken = drillBroken(figures);
        log(`production-shape: ${broken.length === 0 ? 'kept every rule' : broken.join('; ')}\n${drillRows(figures).join('\n')}`);
        results[scenario] = { figures, broken };
        if (broken.length > 0) process.exitCode = 1;
      }
      if (scenario === 'isolation') {
        const minutes = option('minutes', 3);
        results[scenario] = await isolationScenario({
          dir: faultDir('isolation'),
          // The defaults of WORKER_MAX_CONCURRENT_ACTIVITIES/…_WORKFLOW_TASKS and WORKER_MAX_IN_FLIGHT_PER_WEBHOOK
          // would need a hundred misbehaving destinations to show anything; scaled down in proportion.
          slots: 20,
          perWebhook: 4,
          timeoutMs: 5_000,
          healthyMessages: Math.round((minutes * 60_000) / 200),
          healthyGapMs: 200,
          badBurst: 20,
          badGapMs: 5_000,
          log,
        });
      }
      log(`scenario ${scenario} done in ${Math.round((Date.now() - started) / 1000)} s`);
      console.log(JSON.stringify({ scenario, figures: results[scenario] }));
    }
  } finally {
    for (const child of children.reverse()) await stopProcess(child);
  }
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
