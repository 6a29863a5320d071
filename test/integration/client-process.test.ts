/**
 * The client inside a real Node process: what happens at exit, on SIGTERM, and with DEBUG set.
 * Each case runs a small script with `node --import tsx` against a local HTTP server.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const CLIENT = path.join(ROOT, 'src/client');

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

let dir: string;
let server: http.Server;
let endpoint: string;
let batches: { batch: { event?: string }[] }[];
let statuses: number[];

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-client-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeEach(async () => {
  batches = [];
  statuses = [];
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      batches.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      const status = statuses.shift() ?? 200;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(status === 200 ? '{"success":true}' : '{"code":"unavailable","message":"try later"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** Runs `body` as a TypeScript script with `Analytics` imported; `onStdout` may act on the child. */
function run(name: string, body: string, env: NodeJS.ProcessEnv = {}, onStdout?: (text: string, child: ReturnType<typeof spawn>) => void): Promise<Run> {
  const file = path.join(dir, `${name}.ts`);
  writeFileSync(file, `import { Analytics } from ${JSON.stringify(CLIENT)};\n${body}\n`);
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ENDPOINT: endpoint, ...env };
  if (env.DEBUG === undefined) delete childEnv.DEBUG;
  const child = spawn(process.execPath, ['--import', 'tsx', file], { cwd: ROOT, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    onStdout?.(stdout, child);
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
}

describe('process lifetime', () => {
  it('does not keep the process alive: queued messages and timers never hold it open', async () => {
    const result = await run(
      'idle-exit',
      `const analytics = new Analytics({ writeKey: 'k', endpoint: process.env.ENDPOINT!, flushAfter: 60_000 });
       analytics.track({ userId: 'u1', event: 'Queued' });
       console.log('queued', analytics.pending);`,
    );
    expect(result).toMatchObject({ code: 0, stdout: 'queued 1\n' });
    expect(batches).toHaveLength(0);
  });

  it('an awaited flush() keeps the process alive through a backoff wait, then the process exits', async () => {
    statuses = [503];
    const result = await run(
      'flush-through-retry',
      `const analytics = new Analytics({ writeKey: 'k', endpoint: process.env.ENDPOINT!, backoff: { initial: 300, max: 300 } });
       analytics.track({ userId: 'u1', event: 'Retried' });
       analytics.flush().then((result) => console.log(JSON.stringify(result)));`,
    );
    expect(result).toMatchObject({ code: 0, stdout: '{"delivered":1,"failed":0}\n' });
    expect(batches).toHaveLength(2);
  });

  it('shuts down gracefully on SIGTERM with close({ timeout }) (the docs/client.md example)', async () => {
    const result = await run(
      'sigterm',
      `const analytics = new Analytics({ writeKey: 'k', endpoint: process.env.ENDPOINT! });
       process.once('SIGTERM', async () => {
         const { delivered, failed } = await analytics.close({ timeout: 10_000 });
         console.log(\`closed: \${delivered} delivered, \${failed} failed\`);
         process.exit(failed === 0 ? 0 : 1);
       });
       analytics.track({ userId: 'u1', event: 'Before SIGTERM' });
       analytics.track({ userId: 'u2', event: 'Before SIGTERM' });
       console.log('ready');
       setInterval(() => {}, 1_000); // the app's own work, e.g. an HTTP server`,
      {},
      (stdout, child) => {
        if (stdout === 'ready\n') child.kill('SIGTERM');
      },
    );
    expect(result).toMatchObject({ code: 0, stdout: 'ready\nclosed: 2 delivered, 0 failed\n' });
    expect(batches.flatMap((b) => b.batch.map((m) => m.event))).toEqual(['Before SIGTERM', 'Before SIGTERM']);
  });
});

describe('DEBUG environment variable', () => {
  const script = `const analytics = new Analytics({ writeKey: 'k', endpoint: process.env.ENDPOINT! });
    analytics.track({ userId: 'u1', event: 'Debugged' });
    void analytics.close();`;

  it('DEBUG=analytics writes debug lines to stderr', async () => {
    const result = await run('debug-on', script, { DEBUG: 'analytics' });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('analytics debug queued');
    expect(result.stderr).toContain('analytics debug sending batch');
    expect(result.stderr).toContain('analytics debug batch delivered');
  });

  it('without it the client is silent when all goes well', async () => {
    const result = await run('debug-off', script);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(batches).toHaveLength(1);
  });
});
