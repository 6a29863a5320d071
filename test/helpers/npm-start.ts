import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { ROOT, stopProcess, waitFor } from './processes';

/** `npm start` as a user runs it, and what its banner printed. */
export interface Started {
  process: ChildProcess;
  output: () => string;
  banner: { adminToken: string; writeKey: string; sourceId: string; api: string; metrics: string };
}

/**
 * Starts `npm start` (src/main.ts: its own Temporal dev server, worker and API in one process) on
 * `dataDir` and the given ports, with the environment a fresh shell has, and waits for its banner.
 */
export async function npmStart(dataDir: string, ports: { api: number; temporal: number; ui: number }): Promise<Started> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: String(ports.api), TEMPORAL_ADDRESS: `127.0.0.1:${ports.temporal}`, TEMPORAL_UI_PORT: String(ports.ui), LOG_LEVEL: 'info' };
  // What a fresh shell has: nothing from the test run's own setup.
  for (const name of ['DATABASE_PATH', 'TEMPORAL_TASK_QUEUE', 'ADMIN_TOKEN', 'EGRESS_ALLOWLIST', 'PAYLOAD_KEYS_FILE', 'WORKFLOW_BUNDLE', 'HOST']) delete env[name];
  // Its own process group, so a failed test can take the embedded dev server down with it.
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/main.ts')], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const banner = await waitFor(() => {
    const field = (pattern: RegExp) => pattern.exec(output)?.[1];
    const found = {
      adminToken: field(/Authorization: Bearer ([\w-]+)\)/),
      writeKey: field(/Write key\s+(\S+)/),
      sourceId: field(/\(source (\S+)\)/),
      api: field(/Health\s+(http:\/\/\S+)\/health/),
      metrics: field(/Metrics:\s+(http:\/\/\S+)/),
    };
    if (!output.includes('Switchyard is running.') || Object.values(found).some((v) => !v)) throw new Error(`not started yet:\n${output}`);
    return found as Started['banner'];
  }, 180_000, () => child.exitCode !== null && `npm start exited with ${child.exitCode}:\n${output}`);
  return { process: child, output: () => output, banner };
}

/** Stops what npmStart started, its embedded dev server (its process group) with it. */
export async function stopNpmStart(started: Started | undefined): Promise<void> {
  const pid = started?.process.pid;
  await stopProcess(started?.process, 'SIGTERM', 30_000);
  if (pid) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // the group is gone already
    }
  }
}
