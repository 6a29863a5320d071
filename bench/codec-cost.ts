/**
 * Where payload encryption's CPU goes, per delivered message, without Temporal or HTTP around it:
 * the codec over a delivery's payloads, the data-key read and the sealed body's opening at send
 * time, beside the erased-id check every attempt makes with or without encryption. The whole cost
 * is `npm run bench -- --systems switchyard,plain` (docs/performance.md); this names its parts.
 *
 *   npx tsx bench/codec-cost.ts [--iterations N]
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defaultPayloadConverter } from '@temporalio/common';
import { loadConfig } from '../src/config';
import { loadKeyring } from '../src/privacy/load-keyring';
import { EncryptionCodec } from '../src/privacy/payload-codec';
import { bodySealer } from '../src/messages/seal-bodies';
import { openBody, sealBody } from '../src/privacy/sealed-body';
import { openStore } from '../src/store';
import { cpuMicros } from './cpu-micros';

async function main(): Promise<void> {
  const at = process.argv.indexOf('--iterations');
  const iterations = at > 0 ? Number(process.argv[at + 1]) : 20_000;
  const keyring = loadKeyring(loadConfig({ PAYLOAD_KEYS: `bench-1=${randomBytes(32).toString('base64')}` }))!;
  const codec = new EncryptionCodec(keyring);
  // The bench's message (bench/phase.ts), as a delivery carries it.
  const body = {
    type: 'track' as const,
    messageId: 'b-1',
    userId: 'user-1',
    event: 'Order Completed',
    properties: { orderId: 'order-1', total: 42.5, currency: 'EUR', items: 3 },
    context: { library: { name: 'switchyard-bench', version: '1' } },
    timestamp: new Date().toISOString(),
    receivedAt: new Date().toISOString(),
  };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-codec-cost-'));
  const store = await openStore({ databasePath: path.join(dir, 'store.db'), keyring });
  try {
    const subject = 'h1_bench-subject';
    const key = (await store.dataKeys.getOrCreate([subject])).get(subject)!;
    const sealed = sealBody(key, subject, body.messageId, body);
    // A first-try delivery's payloads through the worker's codec: the workflow's input (sealed body
    // inside), the attempt's input and result, the workflow's result, and the summary.
    const destinationId = `dst_${'b'.repeat(32)}`;
    const input = {
      sourceId: `src_${'b'.repeat(32)}`,
      messageId: body.messageId,
      type: 'track',
      visibleIds: { userId: 'h1_visible-user-hash' },
      destinationIds: [destinationId],
      sealedMessage: sealed,
      policy: { retryWindowMs: 14_400_000, timeoutMs: 5_000, hardWindow: true },
      webhookLabels: { [destinationId]: ['http://127.0.0.1/hook'] },
    };
    const attempt = { destinationId, webhookIndex: 0, messageId: body.messageId, sealedMessage: sealed, timeoutMs: 5_000, round: 1, notAfterMs: Date.now() + 14_400_000 };
    const payloads = [input, attempt, { destinationEnabled: true, webhookCount: 1, outcome: { kind: 'delivered', status: 200 } }, { destinations: [{ destinationId, status: 'delivered' }] }, 'track · sealed → 1 destination'].map(
      (v) => defaultPayloadConverter.toPayload(v),
    );
    // The API's side: a /v1/batch of 100 calls from users who have keys (the bench's steady state),
    // sealed and its start request encoded, per message.
    const sealer = bodySealer(store.dataKeys, keyring);
    const batch = Array.from({ length: 100 }, (_, i) => ({ messageId: `b-${i}`, type: 'track' as const, userId: `user-${i}`, body: { ...body, messageId: `b-${i}`, userId: `user-${i}` } }));
    await sealer(batch);
    const apiRows: [string, number][] = [
      ['API: a batch of 100 calls sealed (keys read, bodies sealed, ids hashed), per call', (await cpuMicros(iterations / 100, () => sealer(batch))) / 100],
      ['API: a workflow start input encoded, per call', await cpuMicros(iterations, async () => codec.encode([payloads[0]]))],
    ];
    const rows: [string, number][] = [
      [`codec: encode and decode ${payloads.length} payloads (a first-try delivery's)`, await cpuMicros(iterations, async () => codec.decode(await codec.encode(payloads)))],
      ['data key read and unwrapped (SQLite store)', await cpuMicros(iterations, () => store.dataKeys.get(subject))],
      ['sealed body opened', await cpuMicros(iterations, () => openBody(key, body.messageId, sealed))],
      ['(both modes) erased-id check (SQLite store)', await cpuMicros(iterations, () => store.erasures.erasedAt([body.userId]))],
    ];
    const table = (title: string, lines: [string, number][]) => `| ${title} | CPU µs per message |\n|---|---:|\n${lines.map(([step, micros]) => `| ${step} | ${micros.toFixed(1)} |`).join('\n')}`;
    console.log(`${table('worker step', rows)}\n\n${table('API step', apiRows)}`);
    const added = (lines: [string, number][]) => lines.reduce((sum, [, micros]) => sum + micros, 0).toFixed(0);
    console.log(`\nencryption adds about ${added(rows.slice(0, 3))} µs of worker CPU per first-try message and ${added(apiRows)} µs of API CPU per call (${os.cpus().length} × ${os.cpus()[0]?.model}, load ${os.loadavg()[0].toFixed(1)})`);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
