import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, createWriteStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { loadCompose } from '../helpers/compose';
import { TEST_PAYLOAD_KEYS } from '../helpers/payload-keys';
import { freePort } from '../helpers/ports';
import { createTestDatabase } from '../helpers/postgres';
import { ROOT, stopProcess, waitFor, waitForPoller } from '../helpers/processes';
import { startReceiver, type Receiver } from '../helpers/receiver';

/**
 * No Docker engine runs here, so the image is proved another way: the Dockerfile is read, and its
 * steps run in a clean copy of the repository (its tracked files only) — every `npm` RUN in the
 * stage it belongs to, every COPY between the context and the stages — then the runtime stage's
 * CMD (`node dist/server.js`) and the compose worker's command (`node dist/worker.js`) start on
 * the test run's Temporal and on a PostgreSQL database of their own (DATABASE_URL), as an
 * unprivileged user when the test runs as root, and must answer /health and deliver a message.
 */
const run = promisify(execFile);
const NOBODY = 65534;
const ADMIN_TOKEN = 'image-steps-admin-token-0123456789ab';

interface Instruction {
  op: string;
  args: string;
}
interface Stage {
  name: string;
  base: string;
  instructions: Instruction[];
}

/** Stages of a Dockerfile, each with its instructions (continuation lines joined, comments dropped). */
function parseDockerfile(text: string): Stage[] {
  const lines = text.replace(/\\\n\s*/g, ' ').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  const stages: Stage[] = [];
  for (const line of lines) {
    const [, op, args] = line.match(/^(\w+)\s+(.*)$/)!;
    if (op.toUpperCase() === 'FROM') {
      const [, base, name] = args.match(/^(\S+)(?:\s+AS\s+(\S+))?$/i)!;
      stages.push({ name: name ?? `stage${stages.length}`, base, instructions: [] });
    } else {
      stages[stages.length - 1].instructions.push({ op: op.toUpperCase(), args });
    }
  }
  return stages;
}

/**
 * RUN steps that are not npm commands, and why the test may skip them. A RUN missing here fails
 * the test: decide how to run it (or why not) before the Dockerfile grows one.
 */
const SKIPPED_RUNS: Record<string, string> = {
  'apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*': 'system packages of the image (this machine has its own toolchain)',
  'mkdir -p /data && chown node:node /data': 'the SQLite DATA_DIR volume; with DATABASE_URL nothing is written there',
};

const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
const stages = parseDockerfile(dockerfile);
const runtimeStage = stages[stages.length - 1];
const workerCommand = loadCompose(ROOT).services.worker.command!;

let tmp: string;
let logDir: string;
let runtimeDir: string;
let server: ChildProcess | undefined;
let worker: ChildProcess | undefined;
let receiver: Receiver;
let api: string;
let scratch: string;
let treeBefore: string[];
const timings: Record<string, number> = {};

/** Every file of a tree with its size and modification time, to show nothing was written. */
function snapshot(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, entry.name);
      if (entry.isDirectory()) walk(full);
      else {
        const st = statSync(full, { throwIfNoEntry: false });
        out.push(`${path.relative(dir, full)} ${st?.size} ${st?.mtimeMs}`);
      }
    }
  };
  walk(dir);
  return out.sort();
}

/**
 * The repository as a fresh clone would have it, taken from the working tree: tracked files and
 * new files not yet added, nothing git ignores (node_modules, dist, data, .tools ...). Like Docker's
 * build context, which is the working directory, not a commit.
 */
function cleanCopy(into: string): void {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const file of files) {
    const from = path.join(ROOT, file);
    if (!existsSync(from) || statSync(from).isDirectory()) continue;
    mkdirSync(path.dirname(path.join(into, file)), { recursive: true });
    copyFileSync(from, path.join(into, file));
  }
}

async function timed<T>(label: string, step: () => Promise<T>): Promise<T> {
  const started = Date.now();
  try {
    return await step();
  } finally {
    timings[label] = (Date.now() - started) / 1000;
  }
}

/**
 * What `npm ci` gets from the network when the image is built: better-sqlite3's prebuilt binary,
 * from its GitHub release. github.com is not reachable here, so prebuild-install would fall back to
 * compiling SQLite from source (what the toolchain stage's python3, make and g++ are for): minutes
 * per `npm ci` on a busy 2-core machine, twice. The same binary — this checkout's own, built by its
 * npm install for the same version and Node ABI — is offered as prebuild-install's local prebuild
 * instead. Without it (a checkout without node_modules) npm ci compiles, only slower.
 */
function offerSqlitePrebuild(dir: string): Record<string, string> {
  const pkg = path.join(ROOT, 'node_modules/better-sqlite3');
  const binary = path.join(pkg, 'build/Release/better_sqlite3.node');
  if (!existsSync(binary)) return {};
  const { version } = JSON.parse(readFileSync(path.join(pkg, 'package.json'), 'utf8')) as { version: string };
  mkdirSync(dir, { recursive: true });
  const tarball = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  execFileSync('tar', ['czf', path.join(dir, tarball), '-C', pkg, 'build/Release/better_sqlite3.node']);
  return { npm_config_better_sqlite3_local_prebuilds: dir };
}

/**
 * The build stage's full `npm ci` is the tree this checkout already installed from the same
 * package-lock.json (CI's `npm install` ran it minutes before), so it is hard-linked in rather than
 * installed again: about 60 CPU-seconds of a CI run for the same files. Only when the lock files are
 * the same byte for byte; `npm ci --omit=dev` still runs for real, and it is what proves the lock
 * matches package.json and that production dependencies alone run the image.
 */
function linkCheckoutInstall(context: string, into: string): void {
  const lock = (dir: string) => readFileSync(path.join(dir, 'package-lock.json'), 'utf8');
  if (lock(context) !== lock(ROOT)) throw new Error('the build context\'s package-lock.json differs from this checkout\'s: run npm install first');
  execFileSync('cp', ['-al', path.join(ROOT, 'node_modules'), path.join(into, 'node_modules')]);
}

/**
 * Runs the Dockerfile's stages, each a directory standing for its filesystem root. Like BuildKit,
 * a stage starts as soon as the stage it is built FROM is done, so independent stages (the build and
 * the production dependencies) run side by side; a COPY --from waits for its stage.
 */
async function buildStages(context: string): Promise<{ dir: string; env: Record<string, string>; cmd: string[] }> {
  // The tarballs come from this machine's npm cache, as a builder's layer cache would hold them:
  // no revalidation round trips, no audit or funding requests.
  const npmEnv = { npm_config_prefer_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false', ...offerSqlitePrebuild(path.join(tmp, 'prebuilds')) };
  interface Built {
    root: string;
    workdir: string;
    env: Record<string, string>;
    cmd: string[];
  }
  const built = new Map<string, Promise<Built>>();
  mkdirSync(path.join(tmp, 'stages'));
  const buildStage = async (stage: Stage): Promise<Built> => {
    const root = path.join(tmp, 'stages', stage.name);
    const base = built.has(stage.base) ? await built.get(stage.base)! : undefined;
    if (base) execFileSync('cp', ['-a', base.root, root]);
    else mkdirSync(root, { recursive: true });
    // A stage inherits its base's working directory, environment and command with its files.
    let workdir = base?.workdir ?? '/';
    const env: Record<string, string> = { ...base?.env };
    let cmd: string[] = base?.cmd ?? [];
    const inStage = (p: string) => path.join(root, path.posix.resolve(workdir, p));
    for (const { op, args } of stage.instructions) {
      if (op === 'WORKDIR') {
        workdir = path.posix.resolve(workdir, args);
        mkdirSync(inStage('.'), { recursive: true });
      } else if (op === 'COPY') {
        const from = args.match(/^--from=(\S+)\s+/)?.[1];
        const parts = args.replace(/^--from=\S+\s+/, '').split(/\s+/);
        const dest = parts.pop()!;
        const fromRoot = from ? (await built.get(from)!).root : context;
        for (const source of parts) {
          const target = dest.endsWith('/') || parts.length > 1 ? path.join(inStage(dest), path.basename(source)) : inStage(dest);
          mkdirSync(path.dirname(target), { recursive: true });
          // Hard links: the deps stage's node_modules is thousands of files nobody writes to.
          execFileSync('cp', ['-al', path.join(fromRoot, source), target]);
        }
      } else if (op === 'RUN') {
        if (args === 'npm ci' && existsSync(path.join(ROOT, 'node_modules'))) {
          await timed(`${stage.name}: ${args} (this checkout's tree, hard-linked)`, async () => linkCheckoutInstall(context, inStage('.')));
        } else if (args.startsWith('npm ')) {
          const log = path.join(logDir, `${stage.name}.log`);
          await timed(`${stage.name}: ${args}`, () => run('sh', ['-c', `${args} >>"${log}" 2>&1`], { cwd: inStage('.'), env: { ...process.env, ...npmEnv } }));
        } else if (!(args in SKIPPED_RUNS)) {
          throw new Error(`Dockerfile RUN the test does not know how to run: ${args}`);
        }
      } else if (op === 'ENV') {
        const [key, value] = args.split('=');
        env[key] = value;
      } else if (op === 'CMD') {
        cmd = JSON.parse(args);
      }
    }
    return { root, workdir, env, cmd };
  };
  for (const stage of stages) {
    const done = buildStage(stage);
    done.catch(() => undefined);
    built.set(stage.name, done);
  }
  const final = await built.get(runtimeStage.name)!;
  await Promise.all(built.values());
  return { dir: path.join(final.root, final.workdir), env: final.env, cmd: final.cmd };
}

function startDist(name: string, command: string[], env: Record<string, string>): ChildProcess {
  const asNobody = process.getuid?.() === 0;
  const child = spawn(command[0] === 'node' ? process.execPath : command[0], command.slice(1), {
    cwd: runtimeDir,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(asNobody && { uid: NOBODY, gid: NOBODY }),
  });
  const log = createWriteStream(path.join(logDir, `${name}.log`));
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  return child;
}

beforeAll(async () => {
  logDir = path.join(ROOT, '.test-data', `image-steps-${process.pid}`);
  rmSync(logDir, { recursive: true, force: true });
  mkdirSync(logDir, { recursive: true });
  // Outside the repository: under it, Node would resolve a package missing from the runtime's
  // node_modules from the repository's own and hide the omission.
  tmp = mkdtempSync(path.join(os.tmpdir(), 'switchyard-image-'));
  chmodSync(tmp, 0o755);
  for (let dir = tmp; dir !== path.dirname(dir); dir = path.dirname(dir)) expect(existsSync(path.join(path.dirname(dir), 'node_modules'))).toBe(false);
  const context = path.join(tmp, 'context');
  await timed('clean copy', async () => cleanCopy(context));
  const image = await timed('all stages', () => buildStages(context));
  runtimeDir = image.dir;

  receiver = await startReceiver();
  const databaseUrl = await createTestDatabase('image_steps');
  const port = await freePort();
  const metricsPort = await freePort();
  api = `http://127.0.0.1:${port}`;
  scratch = path.join(tmp, 'scratch');
  mkdirSync(scratch);
  if (process.getuid?.() === 0) chownSync(scratch, NOBODY, NOBODY);
  const taskQueue = `image-steps-${process.pid}`;
  const env = {
    PATH: process.env.PATH!,
    // Where a stray temporary file would land: checked empty at the end.
    HOME: scratch,
    TMPDIR: scratch,
    ...image.env,
    DATA_DIR: path.join(scratch, 'data-dir-unused'),
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS!,
    TEMPORAL_NAMESPACE: process.env.TEMPORAL_NAMESPACE ?? 'default',
    TEMPORAL_TASK_QUEUE: taskQueue,
    EGRESS_ALLOWLIST: '127.0.0.0/8,::1/128',
    LOG_LEVEL: 'info',
    PAYLOAD_KEYS: TEST_PAYLOAD_KEYS,
  };
  treeBefore = snapshot(runtimeDir);
  const workerStarted = Date.now();
  worker = startDist('worker', workerCommand, { ...env, METRICS_PORT: String(metricsPort), HOST: '127.0.0.1' });
  server = startDist('server', image.cmd, { ...env, PORT: String(port), HOST: '127.0.0.1', ADMIN_TOKEN });
  await waitForPoller(env.TEMPORAL_ADDRESS, env.TEMPORAL_NAMESPACE, taskQueue, worker);
  timings['worker start to first poll (prebuilt workflow bundle)'] = (Date.now() - workerStarted) / 1000;
}, 20 * 60_000);

afterAll(async () => {
  await stopProcess(server);
  await stopProcess(worker);
  await receiver?.close();
  console.log(`image steps (s): ${JSON.stringify(timings)}`);
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

it('reads the Dockerfile: npm ci and the build in the build stage, npm ci --omit=dev for the runtime, node dist/server.js as user node', () => {
  const npmRuns = stages.flatMap((s) => s.instructions.filter((i) => i.op === 'RUN' && i.args.startsWith('npm ')).map((i) => `${s.name}: ${i.args}`));
  expect(npmRuns).toEqual(['build: npm ci', 'build: npm run build', 'deps: npm ci --omit=dev']);
  expect(runtimeStage.instructions).toEqual(expect.arrayContaining([{ op: 'USER', args: 'node' }, { op: 'CMD', args: '["node", "dist/server.js"]' }]));
  expect(workerCommand).toEqual(['node', 'dist/worker.js']);
});

it('gives the runtime only package.json, dist/ (with the prebuilt workflow bundle) and production node_modules', () => {
  expect(readdirSync(runtimeDir).sort()).toEqual(['dist', 'node_modules', 'package.json']);
  for (const entry of ['server.js', 'worker.js', 'main.js', 'client/index.js', 'client/index.d.ts', 'workflow-bundle.js']) expect(existsSync(path.join(runtimeDir, 'dist', entry))).toBe(true);
  for (const devOnly of ['typescript', 'tsx', 'jest', 'ts-jest']) expect(existsSync(path.join(runtimeDir, 'node_modules', devOnly))).toBe(false);
  expect(existsSync(path.join(runtimeDir, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node'))).toBe(true);
});

it('answers GET /admin/status with 200 once the compiled worker polls both delivery task queues, and GET /health with 200', async () => {
  const body = await waitFor(async () => {
    const response = await fetch(`${api}/admin/status`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    if (response.status !== 200) throw new Error(`/admin/status ${response.status}`);
    return response.json() as Promise<{ status: string; worker: boolean }>;
  }, 60_000, () => (server!.exitCode !== null ? `node dist/server.js exited with ${server!.exitCode}; see ${logDir}/server.log` : false));
  expect(body).toMatchObject({ status: 'ok', temporal: true, worker: true });
  expect((await fetch(`${api}/health`)).status).toBe(200);
});

it('delivers a message through the compiled API and worker, on PostgreSQL', async () => {
  const admin = (route: string, body: unknown) =>
    fetch(`${api}${route}`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const source = (await (await admin('/admin/sources', { name: 'image steps' })).json()) as { id: string; writeKey: string };
  expect((await admin(`/admin/sources/${source.id}/destinations`, { enabled: true, webhooks: [{ url: receiver.url }] })).status).toBe(201);
  const messageId = `image-steps-${Date.now()}`;
  const response = await fetch(`${api}/v1/track`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`${source.writeKey}:`).toString('base64')}`, 'content-type': 'application/json' },
    body: JSON.stringify({ userId: 'u1', event: 'Image Built', messageId }),
  });
  expect(response.status).toBe(200);
  const delivered = await receiver.waitForMessage(messageId, 60_000);
  expect(JSON.parse(delivered.body)).toMatchObject({ type: 'track', event: 'Image Built', userId: 'u1' });
});

it('serves the portal from the assets npm run build put in dist/ (the runtime has no esbuild to bundle them)', async () => {
  expect(existsSync(path.join(runtimeDir, 'node_modules', 'esbuild'))).toBe(false);
  for (const asset of ['index.html', 'portal.js', 'portal.css']) expect(existsSync(path.join(runtimeDir, 'dist', 'portal-web', asset))).toBe(true);
  const page = await fetch(`${api}/portal/`);
  expect(page.status).toBe(200);
  expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
  expect(await page.text()).toContain('<script defer src="/portal/portal.js"></script>');
  const script = await fetch(`${api}/portal/portal.js`);
  expect(script.status).toBe(200);
  expect((await script.text()).length).toBeGreaterThan(1000);
});

it('ships the client library: `switchyard/client` importable from plain Node in the runtime, with its type declarations', () => {
  const script = "const c = require('switchyard/client'); const a = new c.Analytics({ writeKey: 'k', endpoint: 'http://127.0.0.1:9' }); console.log(JSON.stringify({ exports: Object.keys(c).sort(), pending: a.pending })); a.close();";
  const out = JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: runtimeDir, env: { PATH: process.env.PATH! }, encoding: 'utf8' })) as { exports: string[]; pending: number };
  expect(out.exports).toEqual(expect.arrayContaining(['Analytics', 'AnalyticsError', 'DEFAULTS', 'MAX_BATCH_BYTES', 'MAX_MESSAGE_BYTES']));
  expect(out.pending).toBe(0);
  const pkg = JSON.parse(readFileSync(path.join(runtimeDir, 'package.json'), 'utf8')) as { exports: Record<string, { types: string }> };
  expect(existsSync(path.join(runtimeDir, pkg.exports['./client'].types))).toBe(true);
});

it('writes nothing on local disk with DATABASE_URL set: its own tree and TMPDIR unchanged, run by an unprivileged user', async () => {
  expect(snapshot(runtimeDir)).toEqual(treeBefore);
  expect(readdirSync(scratch)).toEqual([]);
  if (process.getuid?.() === 0) {
    for (const child of [server!, worker!]) expect(readFileSync(`/proc/${child.pid}/status`, 'utf8')).toMatch(new RegExp(`^Uid:\\s+${NOBODY}\\s`, 'm'));
  }
});
