import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { ROOT, stopProcess, waitFor } from '../helpers/processes';
import { deliveryResult, send, sourceWithDestination, type TestSystem, useSystem } from '../helpers/system';

/**
 * `npm run receiver` (scripts/receiver.ts) as a person runs it beside `npm start`: a real process
 * on a loopback port, reached by real deliveries from the run's worker, printing a line per request.
 */
interface RunningReceiver {
  process: ChildProcess;
  url: string;
  output: () => string;
  /** The printed line naming this messageId (the n-th one, for retries). */
  lineFor(messageId: string, nth?: number): Promise<string>;
}

const running: RunningReceiver[] = [];

async function startReceiverProcess(args: string[]): Promise<RunningReceiver> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts/receiver.ts'), '--port', '0', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const base = await waitFor(() => {
    const found = /Receiving webhooks on (http:\/\/127\.0\.0\.1:\d+)\//.exec(output)?.[1];
    if (!found) throw new Error(`not listening yet:\n${output}`);
    return found;
  }, 30_000, () => child.exitCode !== null && `receiver exited with ${child.exitCode}:\n${output}`);
  const receiver: RunningReceiver = {
    process: child,
    url: `${base}/hook`,
    output: () => output,
    lineFor: (messageId, nth = 1) =>
      waitFor(() => {
        const lines = output.split('\n').filter((line) => line.includes(`messageId=${messageId} `));
        if (lines.length < nth) throw new Error(`${lines.length} lines for ${messageId} so far:\n${output}`);
        return lines[nth - 1];
      }, 30_000),
  };
  running.push(receiver);
  return receiver;
}

let system: TestSystem;
useSystem((s) => (system = s));
afterAll(() => Promise.all(running.map((r) => stopProcess(r.process))));

const signingSecret = `whsec_${randomBytes(32).toString('base64')}`;

describe('npm run receiver (local webhook receiver)', () => {
  it('prints a delivery with its type, event, messageId, userId, body excerpt and "signature ok" for the right secrets', async () => {
    const receiver = await startReceiverProcess(['--secret', 'receiver-secret', '--signing-secret', signingSecret]);
    const { source, writeKey } = await sourceWithDestination(system.store, { sharedSecret: 'receiver-secret', signingSecret, webhooks: [{ url: receiver.url, headers: {} }] });
    await send(system.app, writeKey, 'track', { messageId: 'rcv-ok-1', userId: 'u1', event: 'Order Completed', properties: { total: 42 } });
    expect(await deliveryResult(system.client, source.id, 'rcv-ok-1')).toMatchObject({ ok: true });

    const line = await receiver.lineFor('rcv-ok-1');
    expect(line).toMatch(/^\d\d:\d\d:\d\d\.\d{3} {2}POST \/hook {2}track {2}"Order Completed" {2}messageId=rcv-ok-1 {2}userId=u1 {2}signature ok, standard-webhooks ok {2}→ 200 {2}\{"total":42\}$/);
  });

  it('prints a verification failure when its secret is not the destination\'s', async () => {
    const receiver = await startReceiverProcess(['--secret', 'not-the-secret', '--signing-secret', `whsec_${randomBytes(32).toString('base64')}`]);
    const { source, writeKey } = await sourceWithDestination(system.store, { sharedSecret: 'receiver-secret', signingSecret, webhooks: [{ url: receiver.url, headers: {} }] });
    await send(system.app, writeKey, 'identify', { messageId: 'rcv-bad-1', userId: 'u2', traits: { plan: 'Premium' } });
    expect(await deliveryResult(system.client, source.id, 'rcv-bad-1')).toMatchObject({ ok: true });

    const line = await receiver.lineFor('rcv-bad-1');
    expect(line).toContain('identify  messageId=rcv-bad-1  userId=u2  signature FAILED (X-Signature does not match --secret), standard-webhooks FAILED');
    expect(line).not.toContain('signature ok');
    expect(line).toContain('{"plan":"Premium"}');
  });

  it('--fail 503 answers 503 to every attempt, so the retries show up as lines', async () => {
    const receiver = await startReceiverProcess(['--fail', '503']);
    expect(receiver.output()).toContain('answering 503 (--fail)');
    const { source, writeKey, destination } = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
    await send(system.app, writeKey, 'track', { messageId: 'rcv-fail-1', userId: 'u3', event: 'Retried' });

    expect(await receiver.lineFor('rcv-fail-1', 1)).toContain('unsigned  → 503');
    expect(await receiver.lineFor('rcv-fail-1', 2)).toContain('unsigned  → 503');
    // Switched off, the delivery stops instead of retrying into the next tests.
    await system.store.destinations.update(destination.id, { enabled: false });
    expect(await deliveryResult(system.client, source.id, 'rcv-fail-1')).toMatchObject({ ok: true, report: { destinations: [{ status: 'stopped' }] } });
  });
});
