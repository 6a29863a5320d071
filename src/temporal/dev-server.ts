import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';

export interface DevServerOptions {
  port: number;
  uiPort?: number;
  /** SQLite file: deliveries survive a restart of the dev server. */
  dbFile: string;
  headless?: boolean;
  /** The codec server the Web UI decodes payloads with (`--ui-codec-endpoint`). */
  uiCodecEndpoint?: string;
  logFile?: string;
  /** More `temporal server start-dev` flags (e.g. `--dynamic-config-value`), after the defaults. */
  extraArgs?: string[];
}

const ROOT = path.resolve(__dirname, '../..');

/** Starts `temporal server start-dev` through scripts/temporal-dev.sh (which builds the CLI once if needed). */
export function startDevServer(options: DevServerOptions): ChildProcess {
  mkdirSync(path.dirname(options.dbFile), { recursive: true });
  const args = ['--port', String(options.port), '--db-filename', options.dbFile, '--log-level', 'warn'];
  if (options.headless) args.push('--headless');
  else if (options.uiPort) args.push('--ui-port', String(options.uiPort));
  if (!options.headless && options.uiCodecEndpoint) args.push('--ui-codec-endpoint', options.uiCodecEndpoint);
  args.push(...(options.extraArgs ?? []));
  return spawn('bash', [path.join(ROOT, 'scripts/temporal-dev.sh'), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    cwd: ROOT,
  });
}
