import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { freePort } from './ports';
import { ROOT } from './processes';

/**
 * Temporal's own server (scripts/temporal-server.sh: v1.32.1 on PostgreSQL, not the dev server) for
 * a test: its own throwaway PostgreSQL and databases under `dir`, its own ports. Each start of the
 * server costs a few seconds (PostgreSQL ~1.5 s, schema ~2 s, server to a registered namespace ~3 s
 * on an idle 2-core machine; several times that on a busy one).
 */
export interface RealTemporal {
  /** `127.0.0.1:<frontend port>` */
  address: string;
  port: number;
  pgPort: number;
  dir: string;
  /** The server's own log (config errors, refused handshakes, authorization errors). */
  logFile: string;
  /** Stops the server (keeping PostgreSQL and its databases) and starts it again with `env` over the start's. */
  restart(env?: NodeJS.ProcessEnv): Promise<void>;
  /** SIGKILLs the server (a crash) and starts it again after `downMs`, on the same databases. */
  killAndRestart(downMs?: number): Promise<void>;
  /** Stops its PostgreSQL (`immediate`: as a crash; `fast`: clients told to go) and starts it again after `downMs`; the server keeps running. */
  restartPostgres(mode: 'fast' | 'immediate', downMs?: number): Promise<void>;
  /** Stops the server, then PostgreSQL. */
  stop(): Promise<void>;
}

export interface RealTemporalOptions {
  /** Where config, logs and the PostgreSQL data go (created). */
  dir: string;
  /** Frontend gRPC port; the other services use offsets from it (see the script). Default: a free block. */
  port?: number;
  pgPort?: number;
  /** History shards (default 4, the script's). */
  shards?: number;
  /** More settings for the script, e.g. TEMPORAL_SERVER_TLS_CERT (see the top of scripts/temporal-server.sh). */
  env?: NodeJS.ProcessEnv;
}

const SCRIPT = path.join(ROOT, 'scripts/temporal-server.sh');

/** Runs one command of scripts/temporal-server.sh; a failure carries the script's own words. */
export function temporalServerScript(command: string, env: NodeJS.ProcessEnv, timeoutMs = 180_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('bash', [SCRIPT, command], { cwd: ROOT, env, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`scripts/temporal-server.sh ${command} failed (${err.message.split('\n')[0]}):\n${stderr.slice(-4_000)}`));
      else resolve(stdout.trim());
    });
  });
}

/**
 * Builds the pinned server and sql tool into .tools/bin when missing (Go; minutes, once per
 * machine). Idempotent and quick once built: call it before any start.
 */
export function ensureRealTemporal(): Promise<string> {
  return temporalServerScript('ensure', process.env, 30 * 60_000);
}

// Offsets from the frontend port the script uses (services, HTTP, membership, metrics).
const PORT_OFFSETS = [0, 1, 2, 3, 6, 10, 11, 767, -300, -299, -298, -297, -294];

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A frontend port whose whole block of service ports is free now. Below 32,000: Temporal stores
 * membership ports (frontend port - 300 and up) as a PostgreSQL smallint, so a server on a port
 * from Linux's ephemeral range (32768+) dies with "value ... is out of range for type smallint".
 */
export async function freeTemporalPort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const base = 12_000 + Math.floor(Math.random() * 19_000);
    const free = await Promise.all(PORT_OFFSETS.map((offset) => portFree(base + offset)));
    if (free.every(Boolean)) return base;
  }
  throw new Error('no free block of ports for a Temporal server');
}

export async function startRealTemporal(options: RealTemporalOptions): Promise<RealTemporal> {
  mkdirSync(options.dir, { recursive: true });
  await ensureRealTemporal();
  const port = options.port ?? (await freeTemporalPort());
  const pgPort = options.pgPort ?? (await freePort());
  const base: NodeJS.ProcessEnv = {
    ...process.env,
    TEMPORAL_SERVER_DIR: options.dir,
    TEMPORAL_FRONTEND_PORT: String(port),
    TEMPORAL_PG_PORT: String(pgPort),
    TEMPORAL_PG_HOST: '127.0.0.1',
    ...(options.shards !== undefined && { TEMPORAL_HISTORY_SHARDS: String(options.shards) }),
    ...options.env,
  };
  let env = base;
  await temporalServerScript('postgres', base);
  try {
    await temporalServerScript('setup', base);
    await temporalServerScript('start', base);
  } catch (err) {
    await temporalServerScript('stop', base).catch(() => undefined);
    await temporalServerScript('postgres-stop', base).catch(() => undefined);
    throw err;
  }
  return {
    address: `127.0.0.1:${port}`,
    port,
    pgPort,
    dir: options.dir,
    logFile: path.join(options.dir, 'server.log'),
    async restart(more: NodeJS.ProcessEnv = {}) {
      await temporalServerScript('stop', env);
      env = { ...base, ...more };
      await temporalServerScript('start', env);
    },
    async killAndRestart(downMs = 0) {
      await temporalServerScript('stop', { ...env, TEMPORAL_SERVER_STOP_SIGNAL: 'KILL' });
      await new Promise((resolve) => setTimeout(resolve, downMs));
      await temporalServerScript('start', env);
    },
    async restartPostgres(mode, downMs = 0) {
      await temporalServerScript('postgres-stop', { ...env, TEMPORAL_PG_STOP_MODE: mode });
      await new Promise((resolve) => setTimeout(resolve, downMs));
      await temporalServerScript('postgres', env);
    },
    async stop() {
      await temporalServerScript('stop', env).catch(() => undefined);
      await temporalServerScript('postgres-stop', env);
    },
  };
}
