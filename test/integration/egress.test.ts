import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { generate } from 'selfsigned';
import { Agent } from 'undici';
import { egressConnector, type Resolve } from '../../src/activities/egress-connector';
import { postWebhook, RESPONSE_BODY_CAP } from '../../src/activities/post-webhook';
import { webhookResolver } from '../../src/activities/webhook-resolver';
import { parseAllowlist } from '../../src/delivery/egress';
import { dnsBudget } from '../../src/delivery/webhook-dns';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { deliveryResult, send, sourceWithDestination, startSystem, type TestSystem } from '../helpers/system';

const loopbackOnly = parseAllowlist(['127.0.0.0/8']);
const agents: Agent[] = [];
const receivers: Receiver[] = [];
const servers: (http.Server | https.Server)[] = [];

function agent(allowlist = loopbackOnly, resolve: Resolve = webhookResolver({ budget: dnsBudget(3_000) }), tls: { ca?: string } = {}): Agent {
  const created = new Agent({ connect: egressConnector(allowlist, { rejectUnauthorized: true, ...tls }, resolve) });
  agents.push(created);
  return created;
}

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  receivers.push(r);
  return r;
}

const post = (via: Agent, url: string) => postWebhook(via, url, { 'content-type': 'application/json' }, '{"type":"track"}', 3_000);

afterAll(async () => {
  await Promise.all(agents.map((a) => a.close()));
  await Promise.all(receivers.map((r) => r.close()));
  for (const server of servers) {
    server.closeAllConnections();
    server.close();
  }
});

describe('the egress connector: resolve, check, connect to the checked address', () => {
  it('refuses a loopback receiver when the allowlist does not admit it: permanent, and no request is sent', async () => {
    const r = await receiver();
    const outcome = await post(agent(parseAllowlist([])), r.url);
    expect(outcome).toEqual({ kind: 'permanent', reason: expect.stringMatching(/^egress refused: 127\.0\.0\.1 is a loopback address; no request was sent/) });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(r.requests).toHaveLength(0);
  });

  it('connects to the address it checked, without asking the system resolver again', async () => {
    const r = await receiver();
    const calls: string[] = [];
    // `hooks.invalid` cannot resolve through the system (RFC 6761), so a success proves the
    // socket went to the address this resolver answered and the check passed.
    const resolve: Resolve = async (hostname) => {
      calls.push(hostname);
      return ['127.0.0.1'];
    };
    const outcome = await post(agent(loopbackOnly, resolve), r.url.replace('127.0.0.1', 'hooks.invalid'));
    expect(outcome).toEqual({ kind: 'success', status: 200 });
    expect(r.requests[0].headers.host).toMatch(/^hooks\.invalid:\d+$/);
    expect(calls).toEqual(['hooks.invalid']);
  });

  it('refuses a name that resolves to a private address (the DNS-rebinding case), naming both', async () => {
    const outcome = await post(agent(loopbackOnly, async () => ['10.1.2.3']), 'http://rebind.invalid:8080/hook');
    expect(outcome).toEqual({
      kind: 'permanent',
      reason: expect.stringMatching(/^egress refused: rebind\.invalid resolves to 10\.1\.2\.3, a private \(RFC 1918\) address/),
    });
  });

  it('refuses the cloud metadata address without connecting', async () => {
    const started = Date.now();
    const outcome = await post(agent(loopbackOnly), 'http://169.254.169.254/latest/meta-data/');
    expect(outcome).toMatchObject({ kind: 'permanent', reason: expect.stringContaining('169.254.169.254 is a link-local address') });
    // A connection attempt to an unrouted address would hang until the connect timeout.
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('skips refused addresses among several answers and connects only to an admitted one', async () => {
    const r = await receiver();
    const outcome = await post(agent(loopbackOnly, async () => ['10.0.0.7', '::ffff:192.168.0.1', '127.0.0.1']), r.url.replace('127.0.0.1', 'mixed.invalid'));
    expect(outcome).toEqual({ kind: 'success', status: 200 });
    expect(r.requests).toHaveLength(1);
  });

  it.each([
    ['0.0.0.0', 'unspecified'],
    ['[::]', 'unspecified'],
    ['[::ffff:a00:1]', 'IPv4-mapped'],
    ['[fd00::1]', 'unique-local'],
    ['100.100.100.200', 'carrier-grade NAT'],
  ])('refuses the literal host %s (%s)', async (host, words) => {
    const outcome = await post(agent(loopbackOnly), `http://${host}:9/hook`);
    expect(outcome).toMatchObject({ kind: 'permanent', reason: expect.stringContaining(words) });
  });

  it('still verifies the certificate against the URL host name after substituting the address', async () => {
    const pems = await generate([{ name: 'commonName', value: 'hooks.invalid' }], {
      keyType: 'ec',
      curve: 'P-256',
      notAfterDate: new Date(Date.now() + 86_400_000),
      extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: 'hooks.invalid' }] }],
    });
    const server = https.createServer({ key: pems.private, cert: pems.cert }, (_req, res) => res.end('ok'));
    servers.push(server);
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const { port } = server.address() as AddressInfo;
    const toLoopback: Resolve = async () => ['127.0.0.1'];
    const trusting = agent(loopbackOnly, toLoopback, { ca: pems.cert });

    expect(await post(trusting, `https://hooks.invalid:${port}/hook`)).toEqual({ kind: 'success', status: 200 });
    expect(await post(trusting, `https://other.invalid:${port}/hook`)).toMatchObject({
      kind: 'permanent',
      reason: expect.stringContaining('ERR_TLS_CERT_ALTNAME_INVALID'),
    });
  });
});

describe('responses', () => {
  it('reads at most a small cap of a response body, then cuts the connection', async () => {
    let sent = 0;
    let closed!: () => void;
    const connectionClosed = new Promise<void>((resolve) => (closed = resolve));
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(16 * 1024, 'x');
      // An endless body: write until the client goes away.
      const pump = () => {
        while (!res.destroyed && res.write(chunk)) sent += chunk.length;
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    });
    server.on('connection', (socket: Socket) => socket.on('close', () => closed()));
    servers.push(server);
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const { port } = server.address() as AddressInfo;

    const outcome = await post(agent(), `http://127.0.0.1:${port}/hook`);
    expect(outcome).toEqual({ kind: 'success', status: 200 });
    await connectionClosed;
    // Socket buffers on both sides hold some bytes; the client read far less than an endless stream.
    expect(RESPONSE_BODY_CAP).toBeLessThanOrEqual(16 * 1024);
    expect(sent).toBeLessThan(16 * 1024 * 1024);
  });
});

describe('through the delivery workflow (worker started with EGRESS_ALLOWLIST=127.0.0.0/8,::1/128)', () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await startSystem();
  });
  afterAll(async () => {
    await system.close();
  });

  it('fails a refused URL permanently, without retrying, and sends nothing to it', async () => {
    const r = await receiver();
    const port = new URL(r.url).port;
    // On Linux 0.0.0.0 reaches the local host: the classic way around a loopback-only deny list.
    const { source, writeKey } = await sourceWithDestination(system.store, {
      webhooks: [
        { url: `http://0.0.0.0:${port}/hook`, headers: {} },
        { url: 'http://169.254.169.254/latest/meta-data/iam/', headers: {} },
      ],
    });
    await send(system.app, writeKey, 'track', { userId: 'u', event: 'Refused', messageId: 'egress-refused' });
    const result = await deliveryResult(system.client, source.id, 'egress-refused');
    expect(result).toMatchObject({ ok: false, report: { destinations: [{ status: 'failed', rounds: 1 }] } });
    expect(result.ok || result.message).toMatch(/webhook 0: egress refused: 0\.0\.0\.0 is an unspecified address/);
    expect(result.ok || result.message).toMatch(/webhook 1: egress refused: 169\.254\.169\.254 is a link-local address/);
    expect(r.requests).toHaveLength(0);
  });

  it('goes on to the next URL after a refused one', async () => {
    const r = await receiver();
    const { source, writeKey } = await sourceWithDestination(system.store, {
      webhooks: [
        { url: 'http://10.0.0.1/hook', headers: {} },
        { url: r.url, headers: {} },
      ],
    });
    await send(system.app, writeKey, 'track', { userId: 'u', event: 'Refused', messageId: 'egress-failover' });
    expect(await deliveryResult(system.client, source.id, 'egress-failover')).toMatchObject({
      ok: true,
      report: { destinations: [{ status: 'delivered', webhookIndex: 1, rounds: 1 }] },
    });
    expect(r.requests).toHaveLength(1);
  });
});
