import { DEFAULT_SYSTEMS, SYSTEMS, type SystemName } from './systems';

export interface BenchOptions {
  messages: number[];
  concurrency: number;
  batchSize: number;
  fanout: number;
  repeats: number;
  warmup: number;
  systems: SystemName[];
  outDir: string;
  label: string;
  keepData: boolean;
  quick: boolean;
  /** Messages per second offered; undefined sends as fast as batches are acknowledged. */
  rate: number | undefined;
  /** Extra `temporal server start-dev` flags, after scripts/temporal-dev.sh's own. */
  temporalFlags: string[];
  /** Switchyard as `npm start` runs it: API and worker in one process, workflow starts eager. */
  combined: boolean;
  /** Write V8 CPU profiles of the API and workers next to the results. */
  profile: boolean;
  /** Single calls: one message per request (POST /v1/track), offered open loop at `rate` per second. */
  single: boolean;
  /** Temporal's dev server (SQLite), or its real server on PostgreSQL as in production (scripts/temporal-server.sh). */
  server: 'dev' | 'real';
  /** The real server's history shards. */
  shards: number;
  /** Switchyard worker processes and API processes (separate processes only). */
  workers: number;
  apis: number;
  /** The noisy-neighbour scenario: messages to a hanging destination's source waiting beside the measured one (0: not this scenario). */
  noisyBacklog: number;
  /** After the runs, delete every closed delivery as retention does and report what that cost (0: not). */
  retentionConcurrency: number;
  /** The replay scenario: archived messages replayed to a new destination beside live single calls (0: not this scenario). */
  replayMessages: number;
  /** The replay scenario's longest run in minutes, then it is cancelled and reported as far as it got (0: to the end). */
  replayMinutes: number;
}

export const USAGE = `npm run bench -- [options]

  --quick               1,000 messages, one repeat, short warm-up (what the harness test runs)
  -n, --messages LIST   message counts to run, e.g. 10000 or 1000,10000,100000 or 10k,100k (default 10000)
  -c, --concurrency C   sender lanes, each with one batch in flight (default 2: with the fan-out,
                        64 messages in flight, which saturates one dev server without queueing
                        starts for longer than the API's start timeout)
      --single R        single calls, as a website or app sends them: one message per request
                        (POST /v1/track), R requests/s on a fixed schedule whether or not earlier
                        ones were answered (open loop); ack latency is each call's 200
      --rate R          offer at most R messages/s (batches paced evenly) instead of as fast as
                        acknowledged: latency at a load the system sustains, not the backlog
  -b, --batch B         messages per batch: one POST /v1/batch for Switchyard (default 100)
      --fanout S        messages of one batch in flight at once: the API's workflow starts per
                        request (INGEST_START_CONCURRENCY, default 32), and the same for the references
  -r, --repeats R       runs of each (N, system), order rotated between repeats (default 1)
      --warmup W        unmeasured messages per system before the first run (default 1000; --quick 200)
      --systems LIST    any of raw,bare,floor,design-floor,switchyard,plain,unarchived,limited,governed,mapped,planned,inserted,scripted
                        (default raw,bare,floor,design-floor,switchyard;
                        floor is the empty workflow started like a delivery, in the same process shape
                        (--workers, --apis), the reference for Switchyard's own cost; design-floor is the
                        same workflow calling one no-op local activity (the least a workflow that calls
                        an activity costs); plain is Switchyard with PAYLOAD_ENCRYPTION=off beside it, for
                        the codec's cost; unarchived is Switchyard with ARCHIVE_RETENTION=0, for the
                        archive's cost; limited is Switchyard
                        to a destination with a rate limit that never binds, for the shared limiter's cost;
                        governed is Switchyard to a destination with consent and 10 destination filters,
                        sent messages with consent, for the cost of consent and filters at ingest; mapped
                        is Switchyard to an Actions destination whose two mappings both match, two
                        requests per message, for the cost of Actions mappings; planned is Switchyard
                        from a source with a connected 50-rule tracking plan its messages meet, for the
                        cost of tracking plans at ingest; inserted is a webhook destination with an
                        insert function, scripted a destination function whose fetch delivers)
      --label TEXT      appended to the result file names and stored in the results
      --out-dir DIR     where results go (default bench/results)
      --keep-data       keep the run's Temporal data folder under .bench-data/
      --combined        run Switchyard's API and worker in one process as npm start does (src/main.ts
                        on the bench's dev server), where workflow starts are eager (INGEST_EAGER_START)
      --profile         write V8 CPU profiles of the API, worker and bare worker (<results>-profiles/,
                        open in Chrome DevTools) and print each one's top functions
      --server dev|real     Temporal's dev server on SQLite (default), or its real server (v1.32.1, built
                        into .tools/bin) on a throwaway PostgreSQL, configured by scripts/temporal-server.sh
                        as Switchyard ships it; Switchyard's store is then a database on that PostgreSQL
      --shards N        the real server's history shards (default 4)
      --workers N       Switchyard worker processes (default 1), metered as worker-1, worker-2, ...;
                        the floor runs as many (floorWorker-1, ...)
      --apis N          Switchyard API processes (default 1), metered as api-1, ...; the sender spreads
                        batches over them round-robin; the floor runs as many. Neither with --combined
      --noisy           no noisy neighbours: Switchyard alone, single calls at --rate
                        (default 20/s) for -n messages (default 1,200), measured alone and then beside
                        a destination of another source whose receiver hangs until the delivery
                        timeout, with a backlog of --backlog messages (default 2,000) waiting
      --backlog N       the hanging destination's backlog in --noisy (default 2000)
      --replay N        a replay beside live traffic: N messages archived for a source with
                        no destination, then a destination added and the archive replayed to it
                        (POST /admin/replays) while live single calls at --rate (default 20/s) go to
                        Switchyard's own source in windows of -n messages (default 1,200), measured
                        before the replay, for as long as it runs, and after it: live latency per
                        window beside the replay against without, and the replay's own rate
      --replay-for M    cancel the replay after M minutes and report it as far as it got (default:
                        to the end; on 2 cores a 100,000-message replay beside live calls takes most
                        of an hour)
      --retention       after the runs, delete every closed delivery of the run through
                        DeleteWorkflowExecution (16 at a time), as retention deletes a closed run once
                        its time is up, and report Temporal's and PostgreSQL's CPU per deleted workflow
                        (a released server takes no namespace retention under an hour)
      --temporal-flags "FLAGS"   more \`temporal server start-dev\` flags for the bench's server, e.g.
                        "--sqlite-pragma synchronous=normal --dynamic-config-value K=V"
      --plan-stall [--rules N]   alone, first: no system started; how long a tracking-plan change of
                        N rules (default 2,000) holds an API process's event loop (the longest
                        stretch a 1 ms timer could not run, and the loop delay's max and p99)

Server and worker settings come from the environment, as for Switchyard itself
(e.g. WORKER_MAX_CONCURRENT_ACTIVITIES=400 npm run bench); both workers get the same ones.`;

function count(text: string, name: string): number {
  const match = /^(\d+(?:\.\d+)?)(k)?$/i.exec(text.trim());
  const value = match ? Number(match[1]) * (match[2] ? 1_000 : 1) : NaN;
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name}: "${text}" is not a positive whole number`);
  return value;
}

export function parseOptions(argv: string[], defaultFanout: number): BenchOptions {
  const options: BenchOptions = {
    messages: [10_000],
    concurrency: 2,
    rate: undefined,
    batchSize: 100,
    fanout: defaultFanout,
    repeats: 1,
    warmup: 1_000,
    systems: [...DEFAULT_SYSTEMS],
    outDir: 'bench/results',
    label: '',
    keepData: false,
    quick: false,
    temporalFlags: [],
    combined: false,
    profile: false,
    single: false,
    server: 'dev',
    shards: 4,
    workers: 1,
    apis: 1,
    noisyBacklog: 0,
    retentionConcurrency: 0,
    replayMessages: 0,
    replayMinutes: 0,
  };
  let noisy = false;
  let backlogGiven = false;
  let rateGiven = false;
  let processesGiven = false;
  let shardsGiven = false;
  let warmupGiven = false;
  let messagesGiven = false;
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = () => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`${flag} needs a value`);
      return next;
    };
    switch (flag) {
      case '--quick':
        options.quick = true;
        break;
      case '-n':
      case '--messages':
        options.messages = value().split(',').map((n) => count(n, flag));
        messagesGiven = true;
        break;
      case '-c':
      case '--concurrency':
        options.concurrency = count(value(), flag);
        break;
      case '-b':
      case '--batch':
        options.batchSize = count(value(), flag);
        break;
      case '--rate':
        options.rate = count(value(), flag);
        rateGiven = true;
        break;
      case '--noisy':
        noisy = true;
        break;
      case '--replay':
        options.replayMessages = count(value(), flag);
        break;
      case '--replay-for':
        options.replayMinutes = count(value(), flag);
        break;
      case '--backlog':
        options.noisyBacklog = count(value(), flag);
        backlogGiven = true;
        break;
      case '--single':
        options.rate = count(value(), flag);
        rateGiven = true;
        options.single = true;
        break;
      case '--fanout':
        options.fanout = count(value(), flag);
        break;
      case '-r':
      case '--repeats':
        options.repeats = count(value(), flag);
        break;
      case '--warmup':
        options.warmup = Number(value());
        if (!Number.isInteger(options.warmup) || options.warmup < 0) throw new Error('--warmup: must be a whole number');
        warmupGiven = true;
        break;
      case '--systems':
        options.systems = value()
          .split(',')
          .map((s) => s.trim())
          .map((s) => {
            if (!(SYSTEMS as readonly string[]).includes(s)) throw new Error(`--systems: "${s}" is not one of ${SYSTEMS.join(', ')}`);
            return s as SystemName;
          });
        break;
      case '--label':
        options.label = value().replace(/[^\w.-]+/g, '-');
        break;
      case '--out-dir':
        options.outDir = value();
        break;
      case '--temporal-flags':
        options.temporalFlags.push(...value().split(/\s+/).filter(Boolean));
        break;
      case '--combined':
        options.combined = true;
        break;
      case '--profile':
        options.profile = true;
        break;
      case '--server': {
        const server = value();
        if (server !== 'dev' && server !== 'real') throw new Error(`--server: "${server}" is not dev or real`);
        options.server = server;
        break;
      }
      case '--shards':
        options.shards = count(value(), flag);
        shardsGiven = true;
        break;
      case '--workers':
        options.workers = count(value(), flag);
        processesGiven = true;
        break;
      case '--apis':
        options.apis = count(value(), flag);
        processesGiven = true;
        break;
      case '--retention':
        options.retentionConcurrency = 16;
        break;
      case '--keep-data':
        options.keepData = true;
        break;
      case '-h':
      case '--help':
        throw new HelpRequested();
      default:
        throw new Error(`unknown option ${flag}`);
    }
  }
  if (options.quick) {
    if (!messagesGiven) options.messages = [1_000];
    if (!warmupGiven) options.warmup = 200;
  }
  if (backlogGiven && !noisy) throw new Error('--backlog is for --noisy');
  if (noisy) {
    if (!backlogGiven) options.noisyBacklog = options.quick ? 200 : 2_000;
    if (!messagesGiven) options.messages = [options.quick ? 100 : 1_200];
    if (!rateGiven) options.rate = 20;
    options.single = true;
    options.systems = ['switchyard'];
    options.repeats = 1;
  }
  if (options.replayMinutes > 0 && options.replayMessages === 0) throw new Error('--replay-for is for --replay');
  if (options.replayMessages > 0) {
    if (noisy) throw new Error('--replay and --noisy are two scenarios: one at a time');
    if (!messagesGiven) options.messages = [options.quick ? 100 : 1_200];
    if (!rateGiven) options.rate = 20;
    options.single = true;
    options.systems = ['switchyard'];
    options.repeats = 1;
  }
  if (options.combined && processesGiven) throw new Error('--workers and --apis run separate processes: not with --combined');
  if (shardsGiven && options.server !== 'real') throw new Error('--shards is for the real server (--server real); the dev server has one shard');
  if (options.server === 'real' && options.temporalFlags.length > 0) throw new Error('--temporal-flags are dev server flags; the real server is configured by scripts/temporal-server.sh');
  if (options.batchSize > 500) throw new Error('--batch: at most 500 (a /v1/batch request is limited to 500 KB)');
  return options;
}

export class HelpRequested extends Error {}
