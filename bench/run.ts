import { execSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, SETTINGS } from '../src/config';
import { ROOT } from '../test/helpers/processes';
import { HelpRequested, parseOptions, USAGE, type BenchOptions } from './options';
import { phaseRunner, type PhaseResult } from './phase';
import { SYSTEM_TITLES } from './systems';
import { busiestProfiles, topFunctions } from './profile';
import { actionsTable, archiveTable, dataControlTable, encryptionTable, markdownTable, percent, rateLimitTable, ratios, runsTable, stagesTable, summarize, svgChart, trackingPlanTable, insertFunctionTable, destinationFunctionTable } from './report';
import { round } from './stats';
import { deleteClosedWorkflows, retentionLine, type RetentionCost } from './retention';
import { startStack } from './system';
import { backlogSettled, noisyRow, noisyTable, sendBacklog, startHangingReceiver, type NoisyRow } from './noisy';
import { replayTable, runReplayScenario, type ReplayScenario } from './replay-beside-live';
import { planCompileStall, ruleCount } from './plan-compile-stall';

/**
 * `npm run bench`: Switchyard end to end, side by side with bare Temporal and the raw HTTP ceiling,
 * on one fresh Temporal dev server. See docs/performance.md for what each figure means.
 */
const stderrIsTty = process.stderr.isTTY;
let tickerLines = 0;
function progress(line: string, final = false): void {
  if (stderrIsTty) {
    process.stderr.write(`\r\x1b[K${line}${final ? '\n' : ''}`);
  } else if (final || tickerLines++ % 5 === 0) {
    process.stderr.write(`${line}\n`);
  }
}
const log = (line: string) => progress(line, true);

function shell(command: string): string {
  try {
    return execSync(command, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
}

/** Switchyard's settings as the bench's processes see them: only those set in the environment. */
function settingsFromEnvironment(): Record<string, string> {
  return Object.fromEntries(Object.values(SETTINGS).flatMap((s) => (process.env[s.env] === undefined ? [] : [[s.env, process.env[s.env]!]])));
}

async function main(): Promise<number> {
  // No system to start: how long a tracking-plan change holds an API process's event loop.
  if (process.argv[2] === '--plan-stall') {
    await planCompileStall(ruleCount(process.argv.slice(3)));
    return 0;
  }
  let options: BenchOptions;
  try {
    options = parseOptions(process.argv.slice(2), loadConfig().ingestStartConcurrency);
  } catch (err) {
    if (err instanceof HelpRequested) {
      console.log(USAGE);
      return 0;
    }
    console.error(`${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }

  const startedAt = new Date();
  const stamp = startedAt.toISOString().replace(/:/g, '-').replace(/\.\d+Z$/, 'Z');
  const runId = `b${startedAt.getTime().toString(36)}`;
  const dataDir = path.join(ROOT, '.bench-data', stamp);
  const uptimeBefore = shell('uptime');
  // The code measured is the code at the start: a commit made while a long run goes on is not it.
  const code = { commit: shell('git rev-parse --short HEAD'), uncommittedChanges: shell("git status --porcelain -- src bench scripts package.json ':!bench/results'") !== '' };
  log(`Switchyard bench ${stamp}: N=${options.messages.join(',')}, concurrency ${options.concurrency} × batch ${options.batchSize} (fan-out ${options.fanout}), ${options.repeats} repeat(s), systems ${options.systems.join(', ')}`);
  log(`machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB; ${uptimeBefore}`);

  const stem = path.join(options.outDir, `${stamp}${options.label ? `-${options.label}` : ''}`);
  const cpuProfileDir = options.profile ? path.resolve(`${stem}-profiles`) : undefined;
  // The noisy neighbour runs with the production per-URL cap (the other scenarios raise it to the
  // worker's slots so they measure delivery, not the cap): the cap is what sends a hanging URL's
  // attempts to the slow lane.
  if (options.noisyBacklog > 0) process.env.WORKER_MAX_IN_FLIGHT_PER_WEBHOOK ??= SETTINGS.workerMaxInFlightPerWebhook.default;
  const stack = await startStack(dataDir, log, {
    temporalFlags: options.temporalFlags,
    fanout: options.fanout,
    cpuProfileDir,
    combined: options.combined,
    server: options.server,
    shards: options.shards,
    workers: options.workers,
    apis: options.apis,
    variants: (['plain', 'unarchived'] as const).filter((name) => options.systems.includes(name)),
    designFloor: options.systems.includes('design-floor'),
  });
  const runner = phaseRunner(stack, runId, progress);
  const results: PhaseResult[] = [];
  let retention: RetentionCost | undefined;
  let replay: ReplayScenario | undefined;
  let noisy: { alone: NoisyRow; beside: NoisyRow; backlog: number; settledSeconds: number; hangingRequests: number; hangingRequestsWhileMeasured: number } | undefined;
  const stop = async () => {
    await runner.close();
    await stack.stop();
  };
  const interrupt = () => {
    log('interrupted: stopping the bench processes');
    // A child that does not stop in time is killed on exit (see startStack).
    setTimeout(() => process.exit(130), 20_000).unref();
    void stop().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  try {
    const base = { concurrency: options.concurrency, batchSize: options.batchSize, fanout: options.fanout, rate: options.rate, single: options.single };
    if (options.warmup > 0) {
      log(`warm-up: ${options.warmup} messages per system (JIT, connection pools, workflow caches; not measured)`);
      for (const system of options.systems) await runner.run(system, { ...base, rate: undefined, single: false, messages: options.warmup }, 0, { warmup: true });
    }
    if (options.noisyBacklog > 0) {
      const hanging = await startHangingReceiver();
      try {
        const load = { ...base, messages: options.messages[0] };
        const alone = await runner.run('switchyard', load, 1);
        const neighbour = await stack.addSource('noisy neighbour', hanging.url);
        log(`noisy neighbour: ${options.noisyBacklog} messages to a destination whose receiver hangs until the delivery timeout`);
        await sendBacklog(stack.switchyard.apiUrl, neighbour.writeKey, options.noisyBacklog, `${runId}-backlog-`);
        const settledMs = await backlogSettled(stack.client, stack.switchyard.taskQueue, 30 * 60_000);
        log(`backlog accepted and settled ${Math.round(settledMs / 1000)} s after its last batch; the hanging receiver has had ${hanging.received()} requests`);
        const before = hanging.received();
        const beside = await runner.run('switchyard', load, 2);
        results.push(alone, beside);
        noisy = { alone: noisyRow('alone', alone), beside: noisyRow(`beside a hanging destination's ${options.noisyBacklog}-message backlog`, beside), backlog: options.noisyBacklog, settledSeconds: round(settledMs / 1000, 1), hangingRequests: hanging.received(), hangingRequestsWhileMeasured: hanging.received() - before };
      } finally {
        hanging.close();
      }
    }
    if (options.replayMessages > 0) {
      const scenario = await runReplayScenario(stack, runner, { ...base, messages: options.messages[0] }, options.replayMessages, runId, log, options.replayMinutes);
      results.push(...scenario.results);
      replay = scenario.scenario;
    }
    for (const messages of options.noisyBacklog > 0 || options.replayMessages > 0 ? [] : options.messages) {
      for (let repeat = 1; repeat <= options.repeats; repeat++) {
        // Rotating the order spreads whatever drifts during a run (data size, other load) over the systems.
        const shift = (repeat - 1) % options.systems.length;
        const order = [...options.systems.slice(shift), ...options.systems.slice(0, shift)];
        for (const system of order) results.push(await runner.run(system, { ...base, messages }, repeat));
      }
    }
    if (options.retentionConcurrency > 0) retention = await deleteClosedWorkflows(stack, [stack.switchyard.taskQueue], options.retentionConcurrency, progress);
  } finally {
    process.off('SIGINT', interrupt);
    process.off('SIGTERM', interrupt);
    await stop();
  }

  const summaries = summarize(results);
  const ratioRows = ratios(summaries);
  const uptimeAfter = shell('uptime');
  const stages = stagesTable(results);
  const encryption = encryptionTable(summaries, ratioRows);
  const rateLimit = rateLimitTable(summaries, ratioRows);
  const dataControl = dataControlTable(summaries, ratioRows);
  const archive = archiveTable(summaries, ratioRows);
  const actions = actionsTable(summaries, ratioRows);
  const trackingPlan = trackingPlanTable(summaries, ratioRows);
  const insertFunction = insertFunctionTable(summaries, ratioRows);
  const destinationFunction = destinationFunctionTable(summaries, ratioRows);
  const table = noisy
    ? noisyTable(noisy.alone, noisy.beside)
    : replay
      ? `${replayTable(replay)}\n\nEvery run in order:\n\n${runsTable(results)}`
      : [
        markdownTable(summaries, ratioRows),
        ...(encryption ? [`Payload encryption's cost (Switchyard, on, beside plain, off):\n\n${encryption}`] : []),
        ...(rateLimit ? [`A rate limit's cost (limited, on, beside Switchyard, off):\n\n${rateLimit}`] : []),
        ...(archive ? [`The archive's cost (Switchyard, on, beside unarchived, ARCHIVE_RETENTION=0):\n\n${archive}`] : []),
        ...(actions ? [`An Actions destination with two mappings (mapped, on, two requests per message, beside Switchyard's one webhook, off):\n\n${actions}`] : []),
        ...(dataControl ? [`Consent and 10 destination filters at ingest (governed, on, beside Switchyard, off):\n\n${dataControl}`] : []),
        ...(trackingPlan ? [`A connected 50-rule tracking plan at ingest (planned, on, beside Switchyard, off):\n\n${trackingPlan}`] : []),
        ...(insertFunction ? [`An insert function before a webhook (inserted, on, beside Switchyard, off):\n\n${insertFunction}`] : []),
        ...(destinationFunction ? [`A destination function whose fetch delivers (scripted, on, beside Switchyard's webhook, off):\n\n${destinationFunction}`] : []),
        ...(stages ? [`Where a single call's time goes (a sample of 100 per run):\n\n${stages}`] : []),
        `Every run in order:\n\n${runsTable(results)}`,
        ...(retention ? [retentionLine(retention)] : []),
      ].join('\n\n');
  const command = `npm run bench --${process.argv.slice(2).map((a) => ` ${a}`).join('')}`;
  const report = {
    schema: 1,
    label: options.label || undefined,
    command,
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model,
      memoryGiB: Math.round(os.totalmem() / 2 ** 30),
      node: process.version,
      platform: `${os.platform()} ${os.release()}`,
      uptimeBefore,
      uptimeAfter,
    },
    code,
    options: { messages: options.messages, combined: options.combined, rate: options.rate, single: options.single, concurrency: options.concurrency, batchSize: options.batchSize, fanout: options.fanout, repeats: options.repeats, warmup: options.warmup, systems: options.systems, temporalFlags: options.temporalFlags, server: options.server, shards: options.server === 'real' ? options.shards : undefined, workers: options.workers, apis: options.apis },
    settings: { ...settingsFromEnvironment(), ...stack.settings },
    definitions: {
      raw: SYSTEM_TITLES.raw,
      bare: SYSTEM_TITLES.bare,
      floor: `${SYSTEM_TITLES.floor}: Switchyard's workflow type, id, input, search attributes, summary and fan-out, from a minimal HTTP ingest (bench/floor), completing in its first workflow task; the floor of one workflow per message`,
      'design-floor': `${SYSTEM_TITLES['design-floor']}: the floor's workflow (bench/floor/design-workflows.ts) started the same way, awaiting one local activity that only reports it ran; the least a workflow that calls an activity costs`,
      switchyard: SYSTEM_TITLES.switchyard,
      plain: `${SYSTEM_TITLES.plain}: the same API and worker with PAYLOAD_ENCRYPTION=off (no payload codec, no sealed bodies, plaintext search attributes), on its own task queue`,
      unarchived: `${SYSTEM_TITLES.unarchived}: the same API and worker with ARCHIVE_RETENTION=0 (no archive row written at ingest), on its own task queue`,
      limited: `${SYSTEM_TITLES.limited}: Switchyard's own API and worker, another source whose destination has the highest rate limit (never binding here), so the shared limiter is asked before every attempt`,
      governed: `${SYSTEM_TITLES.governed}: Switchyard's own API and worker, another source whose destination needs two consent categories (whenAbsent: drop) and has 10 enabled destination filters (bench/governed-destination.ts) that let the bench's messages through, one of them dropping properties from every message; the messages carry consent preferences granting the categories`,
      mapped: `${SYSTEM_TITLES.mapped}: Switchyard's own API and worker, another source whose destination is an Actions destination (bench/mapped-destination.ts) with two mappings that both match every bench message: two requests per message, each body built by its mapping (one with @path fields, one with a @template), the second with a static header`,
      planned: `${SYSTEM_TITLES.planned}: Switchyard's own API and worker, another source (its own signed webhook, as Switchyard's) with a connected tracking plan of 50 rules (bench/tracking-plan-rules.ts: 49 TRACK rules of six typed properties each, one of them the bench's Order Completed, and a COMMON rule) under the default controls (report only): the plan read per request and decided per message at ingest; every bench message meets its rule`,
      inserted: `${SYSTEM_TITLES.inserted}: Switchyard's own API and worker, another source whose signed webhook destination runs an insert function (bench/function-destinations.ts) that adds a property to every message in the sandbox before the webhook delivers it`,
      scripted: `${SYSTEM_TITLES.scripted}: Switchyard's own API and worker, another source whose destination is a destination function (bench/function-destinations.ts) whose onTrack POSTs the event to the receiver, its URL a setting: the delivery is the function's own fetch`,
      endToEnd: 'first batch sent → last message seen by the receiver (bare: by the no-op activity; floor: by the empty workflow); latency per message from its batch being sent',
      ingest: 'first batch sent → last batch acknowledged (Switchyard: 200 from /v1/batch; bare: every start returned; raw: every POST answered); ack latency per batch',
      cpuSecondsPer1000: 'user+system CPU of every bench process during the phase (sender, receiver, Temporal, API, worker, bare worker), per 1,000 messages',
      peakRssMb: 'highest resident memory sampled every 200 ms during the phase',
      historyEventsPerMessage: 'Temporal history length, averaged over 50 workflows of the phase',
      dataGrowthKbPer1000: 'growth of the run folder (Temporal SQLite after a WAL checkpoint, Switchyard store), per 1,000 messages',
    },
    summaries,
    ratios: ratioRows,
    ...(noisy && { noisy }),
    ...(replay && { replay }),
    ...(retention && { retention }),
    results,
  };

  mkdirSync(options.outDir, { recursive: true });
  writeFileSync(`${stem}.json`, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(`${stem}.svg`, svgChart(summaries, `${command} · ${os.cpus().length} CPUs · load before: ${uptimeBefore.replace(/.*load average: /, '')}`));
  writeFileSync(`${stem}.md`, `${table}\n`);
  if (!options.keepData) rmSync(dataDir, { recursive: true, force: true });

  console.log(`\n${table}\n`);
  for (const r of ratioRows) {
    if (r.switchyardVsBare !== null) console.log(`N=${r.messages}: Switchyard = ${r.switchyardVsBare}× bare Temporal, ${r.switchyardVsRaw ?? '–'}× the raw ceiling (end-to-end throughput, medians)`);
    if (r.switchyardVsFloor !== null) console.log(`N=${r.messages}: Switchyard = ${r.switchyardVsFloor}× the empty workflow's throughput at ${r.cpuVsFloor ?? '–'}× its CPU per message (medians)`);
    if (r.switchyardVsDesignFloor) console.log(`N=${r.messages}: Switchyard = ${r.switchyardVsDesignFloor.throughput ?? '–'}× the design floor's throughput at ${r.switchyardVsDesignFloor.cpu ?? '–'}× its CPU per message, its own processes ${r.switchyardVsDesignFloor.ownCpu ?? '–'}× (medians)`);
    if (r.archive) console.log(`N=${r.messages}: the archive costs the API ${percent(r.archive.api)} CPU per message, the whole system ${percent(r.archive.total)} (medians, on vs off)`);
    if (r.actions) console.log(`N=${r.messages}: an Actions destination with two mappings costs the worker ${percent(r.actions.worker)} CPU per message, ${r.actions.workerPerRequest ?? '–'}× a classic destination's per request (medians)`);
    if (r.dataControl) console.log(`N=${r.messages}: consent and 10 destination filters cost the API ${percent(r.dataControl.api)} CPU per message, the worker ${percent(r.dataControl.worker)} (medians, on vs off)`);
    if (r.rateLimit) console.log(`N=${r.messages}: a rate limit costs the worker ${percent(r.rateLimit.worker)} CPU per message, the API ${percent(r.rateLimit.api)} (medians, on vs off)`);
    if (r.encryption) console.log(`N=${r.messages}: payload encryption costs the worker ${percent(r.encryption.worker)} CPU per message, the API ${percent(r.encryption.api)} (medians, on vs off)`);
  }
  console.log(`\nresults: ${path.relative(process.cwd(), `${stem}.json`)}  chart: ${path.relative(process.cwd(), `${stem}.svg`)}`);
  console.log(`load: before "${uptimeBefore}", after "${uptimeAfter}"`);
  if (cpuProfileDir) {
    for (const role of readdirSync(cpuProfileDir)) {
      // The two busiest threads of each process: its main thread, and a workflow thread where there is one.
      for (const { file, busy } of busiestProfiles(path.join(cpuProfileDir, role)).slice(0, 2)) {
        console.log(`\n${role}: ${path.relative(process.cwd(), file)} (${(busy * 100).toFixed(0)}% busy), self time:\n${topFunctions(file).join('\n')}`);
      }
    }
  }
  const incomplete = results.filter((r) => r.missing > 0);
  if (incomplete.length > 0) {
    console.error(`NOT EVERY MESSAGE ARRIVED: ${incomplete.map((r) => `${r.system} n=${r.messages} #${r.repeat} missing ${r.missing}`).join('; ')}`);
    return 1;
  }
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
