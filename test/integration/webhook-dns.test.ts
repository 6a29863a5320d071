import { mkdtempSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Agent } from 'undici';
import { egressConnector } from '../../src/activities/egress-connector';
import { postWebhook } from '../../src/activities/post-webhook';
import { webhookResolver } from '../../src/activities/webhook-resolver';
import { parseAllowlist } from '../../src/delivery/egress';
import { dnsBudget } from '../../src/delivery/webhook-dns';
import { startDnsServer, type DnsServer } from '../helpers/dns-server';
import { startReceiver, type Receiver } from '../helpers/receiver';

/**
 * A worker resolves webhook hosts on a resolver with a deadline, off libuv's
 * thread pool, against a real DNS server on 127.0.0.1 that answers some names and never answers
 * others. The attempts' own timeout (3 s here) is far longer than the DNS budget (half of 1 s), so
 * a DNS failure shows as such, never as the attempt timing out.
 */

const ATTEMPT_TIMEOUT_MS = 3_000;
const loopbackOnly = parseAllowlist(['127.0.0.0/8', '::1/128']);
let dns: DnsServer;
let receiver: Receiver;
let agent: Agent;
/** A loopback port nothing listens on: connecting to it is refused. */
let closedPort: number;

beforeAll(async () => {
  receiver = await startReceiver();
  const port = new URL(receiver.url).port;
  dns = await startDnsServer({
    'hooks.test': ['127.0.0.1'],
    ...Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`hang-${i}.test`, 'hang'])),
    // 127.0.0.2 is loopback too, but the receiver listens on 127.0.0.1 only: refused.
    'refused-first.test': ['127.0.0.2', '127.0.0.1'],
    'private-first.test': ['10.0.0.7', '127.0.0.1'],
    'private-only.test': ['10.0.0.7', 'fd00::7'],
  });
  agent = new Agent({ connect: egressConnector(loopbackOnly, { rejectUnauthorized: true }, webhookResolver({ budget: dnsBudget(1_000), servers: [dns.address] })) });
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  closedPort = (probe.address() as net.AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
  expect(port).not.toBe(String(closedPort));
});
afterAll(async () => {
  await agent?.close();
  await receiver?.close();
  await dns?.close();
});

const urlOn = (host: string) => receiver.url.replace('127.0.0.1', host);
const post = (url: string) => postWebhook(agent, url, { 'content-type': 'application/json' }, '{"type":"track"}', ATTEMPT_TIMEOUT_MS);

it('delivers to a name the DNS server answers', async () => {
  expect(await post(urlOn('hooks.test'))).toEqual({ kind: 'success', status: 200 });
  expect(dns.queries).toContain('hooks.test A');
});

it('ends a lookup the DNS server never answers within the DNS budget, as a DNS timeout, and retries it later', async () => {
  const outcome = await post(urlOn('hang-0.test'));
  expect(outcome).toEqual({ kind: 'retry', reason: 'ETIMEOUT: DNS lookup of hang-0.test gave no answer within 500 ms' });
});

it('keeps resolving and delivering while more lookups hang than libuv has threads', async () => {
  // A budget of 4 s here: the hanging lookups are still pending while the other one is delivered.
  const patient = new Agent({ connect: egressConnector(loopbackOnly, { rejectUnauthorized: true }, webhookResolver({ budget: dnsBudget(8_000), servers: [dns.address] })) });
  const postVia = (url: string) => postWebhook(patient, url, { 'content-type': 'application/json' }, '{"type":"track"}', 6_000);
  try {
    const hanging = Array.from({ length: 8 }, (_, i) => postVia(urlOn(`hang-${i}.test`)));
    let hangingSettled = 0;
    for (const attempt of hanging) void attempt.then(() => hangingSettled++);
    expect(await postVia(urlOn('hooks.test'))).toEqual({ kind: 'success', status: 200 });
    expect(hangingSettled).toBe(0);
    for (const outcome of await Promise.all(hanging)) expect(outcome).toMatchObject({ kind: 'retry', reason: expect.stringMatching(/^ETIMEOUT: DNS lookup of hang-\d\.test gave no answer within 4000 ms$/) });
  } finally {
    await patient.close();
  }
});

it('connects to the next resolved address when the first refuses the connection', async () => {
  const before = receiver.requests.length;
  expect(await post(urlOn('refused-first.test'))).toEqual({ kind: 'success', status: 200 });
  expect(receiver.requests.length).toBe(before + 1);
});

it('fails as refused when every resolved address refuses', async () => {
  const outcome = await post(`http://refused-first.test:${closedPort}/hook`);
  expect(outcome).toMatchObject({ kind: 'retry', reason: expect.stringContaining('ECONNREFUSED') });
});

it('still refuses an answer outside EGRESS_ALLOWLIST: skipped among others, permanent when it is all there is', async () => {
  const before = receiver.requests.length;
  expect(await post(urlOn('private-first.test'))).toEqual({ kind: 'success', status: 200 });
  expect(receiver.requests.length).toBe(before + 1);
  expect(await post(urlOn('private-only.test'))).toEqual({
    kind: 'permanent',
    reason: expect.stringMatching(/^egress refused: private-only\.test resolves to 10\.0\.0\.7, a private \(RFC 1918\) address/),
  });
  expect(receiver.requests.length).toBe(before + 1);
});

it('answers a name DNS does not know as not found', async () => {
  expect(await post(urlOn('unknown.test'))).toEqual({ kind: 'retry', reason: 'ENOTFOUND: unknown.test has no address in DNS' });
});

it('resolves a name the hosts file lists, without asking DNS (a container\'s added host)', async () => {
  const hostsFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'switchyard-hosts-')), 'hosts');
  writeFileSync(hostsFile, '# added by the container runtime\n127.0.0.1\treceiver.internal receiver\n');
  const withHosts = new Agent({ connect: egressConnector(loopbackOnly, { rejectUnauthorized: true }, webhookResolver({ budget: dnsBudget(1_000), servers: [dns.address], hostsFile })) });
  try {
    const asked = dns.queries.length;
    const outcome = await postWebhook(withHosts, urlOn('receiver.internal'), { 'content-type': 'application/json' }, '{"type":"track"}', ATTEMPT_TIMEOUT_MS);
    expect(outcome).toEqual({ kind: 'success', status: 200 });
    expect(dns.queries.length).toBe(asked);
  } finally {
    await withHosts.close();
  }
});

it('resolves localhost from the hosts file and IP literals as they are, without asking DNS', async () => {
  const asked = dns.queries.length;
  expect(await post(urlOn('localhost'))).toEqual({ kind: 'success', status: 200 });
  expect(await post(receiver.url)).toEqual({ kind: 'success', status: 200 });
  expect(dns.queries.length).toBe(asked);
});
