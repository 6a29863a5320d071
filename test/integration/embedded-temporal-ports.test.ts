import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { freePort } from '../helpers/ports';
import { ROOT, stopProcess, waitFor } from '../helpers/processes';
import { nodeArgsFor } from '../helpers/compiled-source';

/**
 * `npm start` never joins a Temporal server it did not start: a port of its own already taken
 * refuses the start at once, naming the port and the variable that moves it; and while its own
 * dev server is not yet listening (the CLI still building), it connects to nothing on that port.
 */
interface Run {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function npmStart(dataDir: string, env: NodeJS.ProcessEnv): Run {
  const full: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'info', TEMPORAL_TASK_QUEUE: `ports-${process.pid}`, ...env };
  for (const name of ['DATABASE_PATH', 'ADMIN_TOKEN', 'PAYLOAD_KEYS_FILE', 'WORKFLOW_BUNDLE', 'EMBEDDED_TEMPORAL']) delete full[name];
  const child = spawn(process.execPath, nodeArgsFor('src/main.ts'), { cwd: ROOT, env: full, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** A plain TCP listener standing in for another program; counts the connections it is offered. */
async function occupy(port: number): Promise<{ server: net.Server; connections: () => number }> {
  let connections = 0;
  const server = net.createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return { server, connections: () => connections };
}

describe('npm start and ports it does not own', () => {
  let dataDir: string;
  const runs: Run[] = [];
  const servers: net.Server[] = [];

  beforeEach(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-ports-'));
  });
  afterEach(async () => {
    for (const run of runs.splice(0)) {
      await stopProcess(run.child, 'SIGTERM', 10_000);
      try {
        process.kill(-run.child.pid!, 'SIGKILL');
      } catch {
        // the group is gone already
      }
    }
    for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('refuses at once when a Temporal server already holds its port, naming the port and TEMPORAL_ADDRESS, and never polls that server', async () => {
    // The run's own Temporal dev server is "someone else's Temporal" here.
    const address = process.env.TEMPORAL_ADDRESS!;
    const port = Number(address.split(':').pop());
    const taskQueue = `ports-joined-${process.pid}`;
    const run = npmStart(dataDir, { TEMPORAL_ADDRESS: address, TEMPORAL_UI_PORT: String(await freePort()), PORT: String(await freePort()), TEMPORAL_TASK_QUEUE: taskQueue });
    runs.push(run);
    expect(await run.exited).toBe(1);
    expect(run.output()).toContain(`port ${port} on 127.0.0.1 is already in use`);
    expect(run.output()).toContain('TEMPORAL_ADDRESS');
    expect(run.output()).toContain('EMBEDDED_TEMPORAL=false');
    expect(run.output()).not.toContain('Switchyard is running');
    // It refused before starting a dev server of its own (no banner) or a worker.
    expect(run.output()).not.toMatch(/Server:\s+\S+:\d+/);
    const connection = await Connection.connect({ address });
    try {
      const { pollers } = await connection.workflowService.describeTaskQueue({ namespace: 'default', taskQueue: { name: taskQueue } });
      expect(pollers ?? []).toHaveLength(0);
    } finally {
      await connection.close();
    }
  }, 120_000);

  it.each([
    ['TEMPORAL_UI_PORT', 'TEMPORAL_UI_PORT'],
    ['PORT', 'PORT'],
  ])(
    'refuses at once when the port of %s is taken, naming it',
    async (variable) => {
      const takenPort = await freePort();
      const occupied = await occupy(takenPort);
      servers.push(occupied.server);
      const env: NodeJS.ProcessEnv = { TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}`, TEMPORAL_UI_PORT: String(await freePort()), PORT: String(await freePort()) };
      env[variable] = String(takenPort);
      const run = npmStart(dataDir, env);
      runs.push(run);
      expect(await run.exited).toBe(1);
      expect(run.output()).toContain(`port ${takenPort} on 127.0.0.1 is already in use`);
      expect(run.output()).toContain(`Set ${variable} to a free port`);
      expect(run.output()).not.toContain('Switchyard is running');
    },
    120_000,
  );

  it('connects to nothing on its Temporal port until its own dev server says it listens', async () => {
    // A Temporal CLI that never gets as far as listening (as one still building would), then fails.
    const release = path.join(dataDir, 'release');
    const cli = path.join(dataDir, 'temporal');
    writeFileSync(cli, `#!/usr/bin/env bash\nwhile [ ! -e '${release}' ]; do sleep 0.1; done\necho 'bind: address already in use' >&2\nexit 1\n`);
    chmodSync(cli, 0o755);
    const temporalPort = await freePort();
    const run = npmStart(dataDir, { TEMPORAL_CLI: cli, TEMPORAL_ADDRESS: `127.0.0.1:${temporalPort}`, TEMPORAL_UI_PORT: String(await freePort()), PORT: String(await freePort()) });
    runs.push(run);
    await waitFor(
      () => {
        if (!run.output().includes('waiting for the embedded Temporal server to listen')) throw new Error(`not waiting yet:\n${run.output()}`);
      },
      90_000,
      () => run.child.exitCode !== null && `npm start exited early:\n${run.output()}`,
    );
    // Another server takes the port meanwhile: npm start must not connect to it.
    const other = await occupy(temporalPort);
    servers.push(other.server);
    writeFileSync(release, '');
    expect(await run.exited).toBe(1);
    expect(existsSync(release)).toBe(true);
    expect(other.connections()).toBe(0);
    expect(run.output()).toContain('Temporal dev server exited');
    expect(run.output()).not.toContain('Switchyard is running');
  }, 120_000);
});
