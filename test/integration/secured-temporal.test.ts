import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { deliveryWorkflowId } from '../../src/delivery/ids';
import { generateTestPki, type TestPki } from '../helpers/certs';
import { faultDir, startOwnApi, type OwnApi } from '../helpers/faults';
import { generateSigningKey, signJwt, startJwtIssuer, type JwtIssuer } from '../helpers/jwt';
import { ROOT, spawnWorker, stopProcess, waitFor } from '../helpers/processes';
import { startRealTemporal, type RealTemporal } from '../helpers/real-temporal';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { startCarryingEverySearchAttribute } from '../helpers/search-attribute-start';
import { ADMIN_TOKEN, basicAuth } from '../helpers/system';
import { nodeArgsFor } from '../helpers/compiled-source';

/**
 * Switchyard's API and worker processes against Temporal's own server serving TLS on loopback, with
 * a CA and certificates this file generates: first TLS (the server's CA), then, on the same server
 * restarted, mutual TLS plus JWT authorization (an API key, as Temporal Cloud takes one). Wrong
 * settings stop start-up at once with what to check, instead of waiting for a server that is there.
 */

let dir: string;
let pki: TestPki;
let issuer: JwtIssuer;
let receiver: Receiver;
let temporal: RealTemporal | undefined;
const processes: ChildProcess[] = [];
let n = 0;

beforeAll(async () => {
  dir = faultDir('secured-temporal');
  pki = generateTestPki(path.join(dir, 'pki'));
  issuer = await startJwtIssuer();
  receiver = await startReceiver();
  temporal = await startRealTemporal({
    dir: path.join(dir, 'temporal'),
    shards: 1,
    env: { TEMPORAL_SERVER_TLS_CERT: pki.serverCert, TEMPORAL_SERVER_TLS_KEY: pki.serverKey, TEMPORAL_SERVER_CLI_TLS_CA: pki.caCert },
  });
}, 300_000);

afterAll(async () => {
  await Promise.all(processes.map((child) => stopProcess(child)));
  await temporal?.stop();
  await receiver?.close();
  await issuer?.close();
}, 120_000);

/** What every process of this file shares: its own store, task queue and the server's address. */
function baseEnv(taskQueue: string): NodeJS.ProcessEnv {
  return {
    TEMPORAL_ADDRESS: temporal!.address,
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_TASK_QUEUE: taskQueue,
    DATABASE_URL: '',
    DATABASE_PATH: path.join(dir, `${taskQueue}.db`),
    ADMIN_TOKEN,
    EGRESS_ALLOWLIST: '127.0.0.0/8',
    TEMPORAL_CONNECT_TIMEOUT: '60s',
    LOG_LEVEL: 'info',
  };
}

/** A worker and an API process with `security` over the base settings; resolves once the API answers. */
async function startPair(name: string, security: NodeJS.ProcessEnv): Promise<{ api: OwnApi; worker: ChildProcess; logs: string[] }> {
  const env = { ...baseEnv(`secured-${name}-${process.pid}`), ...security };
  const workerLog = path.join(dir, `${name}-worker.log`);
  const worker = spawnWorker(env, workerLog);
  processes.push(worker);
  const api = await startOwnApi(env, path.join(dir, `${name}-api.log`));
  processes.push(api.process);
  return { api, worker, logs: [workerLog, api.logFile] };
}

/** A source with a destination at the receiver, one track call through the API; resolves when the receiver has it. */
async function deliverOneMessage(api: OwnApi): Promise<{ sourceId: string; messageId: string }> {
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
  const source = (await (await fetch(`${api.url}/admin/sources`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'secured' }) })).json()) as { id: string; writeKey: string };
  const created = await fetch(`${api.url}/admin/sources/${source.id}/destinations`, { method: 'POST', headers: admin, body: JSON.stringify({ enabled: true, webhooks: [{ url: receiver.url }] }) });
  expect(created.status).toBe(201);
  const messageId = `secured-${++n}-${Date.now()}`;
  const res = await fetch(`${api.url}/v1/track`, {
    method: 'POST',
    headers: { authorization: basicAuth(source.writeKey), 'content-type': 'application/json' },
    body: JSON.stringify({ userId: 'u1', event: 'Order Completed', messageId }),
  });
  // A refusal names its reason only in the API's log ("could not start deliveries"): show it.
  if (res.status !== 200) throw new Error(`the API answered ${res.status} ${await res.text()}; its log says:\n${readFileSync(api.logFile, 'utf8').split('\n').filter((line) => line.includes('could not start')).join('\n')}`);
  const request = await receiver.waitForMessage(messageId, 90_000);
  expect(JSON.parse(request.body)).toMatchObject({ type: 'track', event: 'Order Completed', messageId });
  return { sourceId: source.id, messageId };
}

/** The messageIds the API lists for a source with a status filter (Temporal visibility, here on PostgreSQL). */
async function listed(api: OwnApi, sourceId: string, status: string): Promise<string[]> {
  const res = await fetch(`${api.url}/admin/deliveries?sourceId=${sourceId}&status=${status}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { deliveries: { messageId: string; status: string }[] }).deliveries.map((row) => `${row.messageId} ${row.status}`);
}

/** Runs an entry point (src/worker.ts or src/server.ts) until it exits; its output and how long it took. */
function runUntilExit(entry: 'worker' | 'server', env: NodeJS.ProcessEnv, name: string, timeoutMs = 60_000): Promise<{ code: number | null; output: string; ms: number }> {
  const started = Date.now();
  const logFile = path.join(dir, `${name}.log`);
  const child = spawn(process.execPath, nodeArgsFor(`src/${entry}.ts`), { cwd: ROOT, env: { ...process.env, ...env, PORT: '0', HOST: '127.0.0.1' }, stdio: ['ignore', 'pipe', 'pipe'] });
  processes.push(child);
  const log = createWriteStream(logFile);
  let output = '';
  for (const stream of [child.stdout, child.stderr]) {
    stream.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      log.write(chunk);
    });
  }
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${entry} ${name} still running after ${timeoutMs} ms (it should have stopped at once); output:\n${output.slice(-2_000)}`));
    }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      log.end();
      resolve({ code, output, ms: Date.now() - started });
    });
  });
}

describe('TLS: the server\'s certificate signed by a private CA', () => {
  // First, straight after the start: the script's "ready" once came while the frontend's namespace
  // cache still lacked the search attributes, and the first ingest answered 503.
  it('accepts a start carrying every Switchyard search attribute as soon as the server script says ready', async () => {
    const connection = await Connection.connect({ address: temporal!.address, tls: { serverRootCACertificate: readFileSync(pki.caCert) } });
    try {
      expect(await startCarryingEverySearchAttribute(new Client({ connection }), `secured-readiness-${process.pid}`)).toBeTruthy();
    } finally {
      await connection.close();
    }
  }, 60_000);

  it('delivers a message through a worker and an API that reach Temporal over TLS with TEMPORAL_TLS_CA', async () => {
    const { api, worker } = await startPair('tls', { TEMPORAL_TLS_CA: pki.caCert });
    const { sourceId, messageId } = await deliverOneMessage(api);
    expect(worker.exitCode).toBeNull();
    // A delivery that succeeded writes no last status: PostgreSQL visibility answers the
    // API's delivered clause (a completed run still `delivering`) as the dev server's SQLite does.
    await waitFor(async () => expect(await listed(api, sourceId, 'delivered')).toEqual([`${messageId} delivered`]), 30_000);
    expect(await listed(api, sourceId, 'delivering')).toEqual([]);
  }, 180_000);

  it('stops a worker and an API at once, naming TEMPORAL_TLS_CA, when it is not the CA that signed the server\'s certificate', async () => {
    const env = { ...baseEnv(`secured-wrong-ca-${process.pid}`), TEMPORAL_TLS_CA: pki.otherCaCert };
    const [worker, api] = await Promise.all([runUntilExit('worker', env, 'wrong-ca-worker'), runUntilExit('server', env, 'wrong-ca-api')]);
    for (const run of [worker, api]) {
      expect(run.code).not.toBe(0);
      expect(run.output).toContain(`TLS handshake with Temporal at ${temporal!.address} failed`);
      expect(run.output).toContain('check TEMPORAL_TLS_CA');
      // Well before TEMPORAL_CONNECT_TIMEOUT (60 s): nothing was waited for.
      expect(run.ms).toBeLessThan(45_000);
    }
  }, 120_000);

  it('stops with the variable and the path when a certificate file is missing', async () => {
    const missing = path.join(dir, 'no-such-ca.pem');
    const run = await runUntilExit('worker', { ...baseEnv(`secured-missing-${process.pid}`), TEMPORAL_TLS_CA: missing }, 'missing-ca-worker');
    expect(run.code).not.toBe(0);
    expect(run.output).toContain(`Invalid TEMPORAL_TLS_CA: cannot read ${missing} (ENOENT)`);
  }, 120_000);
});

describe('mutual TLS and an API key (JWT authorization on the server)', () => {
  let admin: string;
  let mtls: NodeJS.ProcessEnv;

  beforeAll(async () => {
    admin = issuer.token(['temporal-system:admin', 'default:admin'], 'switchyard');
    mtls = { TEMPORAL_TLS_CA: pki.caCert, TEMPORAL_TLS_CERT: pki.clientCert, TEMPORAL_TLS_KEY: pki.clientKey };
    // The same server and databases, now requiring client certificates from the test CA and a JWT from the issuer.
    await temporal!.restart({
      TEMPORAL_SERVER_TLS_CERT: pki.serverCert,
      TEMPORAL_SERVER_TLS_KEY: pki.serverKey,
      TEMPORAL_SERVER_TLS_CLIENT_CA: pki.caCert,
      TEMPORAL_SERVER_JWKS_URL: issuer.jwksUrl,
      TEMPORAL_SERVER_CLI_TLS_CA: pki.caCert,
      TEMPORAL_SERVER_CLI_TLS_CERT: pki.clientCert,
      TEMPORAL_SERVER_CLI_TLS_KEY: pki.clientKey,
      TEMPORAL_SERVER_CLI_API_KEY: admin,
    });
  }, 180_000);

  it('delivers with a client certificate and an API key, and the key is in no log line and no workflow history', async () => {
    const { api, worker, logs } = await startPair('mtls-key', { ...mtls, TEMPORAL_API_KEY: admin });
    const { sourceId, messageId } = await deliverOneMessage(api);
    expect(worker.exitCode).toBeNull();

    const connection = await Connection.connect({ address: temporal!.address, tls: { serverRootCACertificate: readFileSync(pki.caCert), clientCertPair: { crt: readFileSync(pki.clientCert), key: readFileSync(pki.clientKey) } }, apiKey: admin });
    try {
      const history = await new Client({ connection }).workflow.getHandle(deliveryWorkflowId(sourceId, messageId)).fetchHistory();
      expect(JSON.stringify(history)).not.toContain(admin);
    } finally {
      await connection.close();
    }
    for (const log of logs) {
      const text = readFileSync(log, 'utf8');
      expect(text.length).toBeGreaterThan(0);
      expect(text).not.toContain(admin);
      expect(text).not.toContain(admin.split('.')[2]);
    }
  }, 180_000);

  it('refuses a worker without a client certificate at once: the server requires one', async () => {
    const run = await runUntilExit('worker', { ...baseEnv(`secured-no-cert-${process.pid}`), TEMPORAL_TLS_CA: pki.caCert, TEMPORAL_API_KEY: admin }, 'no-client-cert-worker');
    expect(run.code).not.toBe(0);
    expect(run.output).toContain('the server requires a client certificate: set TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY');
    expect(run.output).not.toContain(admin);
  }, 120_000);

  it('refuses a worker and an API whose API key the server does not accept, saying so, without printing the key', async () => {
    // Signed by a key the server's JWKS does not have, under the same key id.
    const wrong = signJwt(generateSigningKey(), 'switchyard-test', { sub: 'intruder', permissions: ['temporal-system:admin'] });
    const env = { ...baseEnv(`secured-wrong-key-${process.pid}`), ...mtls, TEMPORAL_API_KEY: wrong };
    const [worker, api] = await Promise.all([runUntilExit('worker', env, 'wrong-key-worker'), runUntilExit('server', env, 'wrong-key-api')]);
    for (const run of [worker, api]) {
      expect(run.code).not.toBe(0);
      expect(run.output).toContain(`Temporal at ${temporal!.address} refused Switchyard's credentials`);
      expect(run.output).toContain('check TEMPORAL_API_KEY');
      expect(run.output).not.toContain(wrong);
      expect(run.ms).toBeLessThan(45_000);
    }
  }, 120_000);

  it('refuses an API key without rights on the namespace at start-up', async () => {
    const other = issuer.token(['other-namespace:admin'], 'someone-else');
    const run = await runUntilExit('worker', { ...baseEnv(`secured-no-rights-${process.pid}`), ...mtls, TEMPORAL_API_KEY: other }, 'no-rights-worker');
    expect(run.code).not.toBe(0);
    expect(run.output).toContain('refused Switchyard\'s credentials');
    expect(run.output).toContain('allowed on namespace default');
  }, 120_000);
});
