/**
 * What tracing costs per message, on and off, in the code each process runs for it:
 * the API's request span (one per batch of 100), each message's span and its carrier sealed beside
 * the body; the worker's carrier opened, its `webhook.attempt` span with the trace headers, and
 * every span exported over OTLP/HTTP (protobuf, the default) to a sink in another process, so the
 * export's serialising and sending is counted and the sink's reading is not. Off is the same code
 * with no exporter configured: one comparison per call. docs/performance.md "Tracing: what it costs".
 *
 *   npx tsx bench/tracing-cost.ts [--messages N] [--protocol http/json]
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { AttemptOutcome } from '../src/delivery/types';
import { openTraceContext, sealBody } from '../src/privacy/sealed-body';
import { tracedAttempt } from '../src/tracing/attempt-span';
import { traceIngestRequest } from '../src/tracing/ingest-spans';
import { startTracing } from '../src/tracing/tracing';

const BATCH = 100;
const CHUNK = 500;

const argument = (name: string, fallback: string) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : fallback;
};

/** An OTLP/HTTP sink in its own process: answers 200 to every export, reads nothing. */
async function startSink(): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, ['-e', "const s=require('http').createServer((q,r)=>{q.resume();q.on('end',()=>r.writeHead(200).end())});s.listen(0,'127.0.0.1',()=>console.log(s.address().port))"], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve) => child.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString().trim())));
  return { url: `http://127.0.0.1:${port}/v1/traces`, stop: () => child.kill() };
}

const body = { type: 'track' as const, messageId: 'b-1', userId: 'user-1', event: 'Order Completed', properties: { orderId: 'order-1', total: 42.5 } };
const headers = { 'content-type': 'application/json', 'user-agent': 'Switchyard/1.0', 'x-signature': 'f'.repeat(40) };
const success: AttemptOutcome = { kind: 'success', status: 200 };
const sent = async () => success;
const inbound = { traceparent: `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`, tracestate: 'vendor=abc' };

/** One batch through the API's tracing part and each message's attempt through the worker's; CPU µs per message of each. */
async function measure(messages: number): Promise<{ api: number; worker: number }> {
  const key = randomBytes(32);
  let api = 0;
  let worker = 0;
  for (let done = 0; done < messages; done += CHUNK) {
    const sealed: ReturnType<typeof sealBody>[] = [];
    let before = process.cpuUsage();
    for (let b = 0; b < CHUNK; b += BATCH) {
      const request = traceIngestRequest('/v1/batch', 'src_bench', inbound);
      for (let i = 0; i < BATCH; i++) {
        const messageId = `m-${done + b + i}`;
        sealed.push(sealBody(key, 'subject', messageId, body, undefined, undefined, request?.messageCarrier(messageId)));
      }
      request?.end(200);
    }
    let used = process.cpuUsage(before);
    api += used.user + used.system;
    before = process.cpuUsage();
    for (let i = 0; i < CHUNK; i++) {
      const messageId = `m-${done + i}`;
      const trace = openTraceContext(key, messageId, sealed[i]) as { traceparent: string } | undefined;
      await tracedAttempt({ messageId, destinationId: 'dst_bench', webhookIndex: 0, round: 1, method: 'POST', url: 'http://127.0.0.1:9/hook', ...(trace && { trace }) }, true, headers, sent);
    }
    // The batch span processor exports on its timer and when 512 spans wait: let it run, inside the worker's count.
    await new Promise((resolve) => setImmediate(resolve));
    used = process.cpuUsage(before);
    worker += used.user + used.system;
  }
  return { api: api / messages, worker: worker / messages };
}

async function main(): Promise<void> {
  const messages = Number(argument('--messages', '20000'));
  const protocol = argument('--protocol', 'http/protobuf') as 'http/protobuf' | 'http/json';
  // Warm-up, off: the JIT sees the same code paths.
  await measure(messages / 10);
  const off = await measure(messages);
  const sink = await startSink();
  const stop = await startTracing({ tracesExporter: '', otlpEndpoint: '', otlpTracesEndpoint: sink.url, otlpTracesProtocol: protocol, serviceName: 'bench', bspScheduleDelay: 5000 }, 'bench');
  try {
    await measure(messages / 10);
    const before = process.cpuUsage();
    const on = await measure(messages);
    // The spans still queued are exported at shutdown: counted, spread over the messages, on the worker's side.
    const flushBefore = process.cpuUsage();
    await stop?.();
    const flush = process.cpuUsage(flushBefore);
    const flushPerMessage = (flush.user + flush.system) / messages;
    const total = process.cpuUsage(before);
    const rows = [
      ['off: API, per message (sealing without a carrier)', off.api],
      ['off: worker, per message (the attempt wrapper, no span)', off.worker],
      ['on: API, per message (request span / 100, message span, carrier sealed)', on.api],
      ['on: worker, per message (carrier opened, webhook.attempt span, headers, export)', on.worker + flushPerMessage],
    ] as const;
    console.log(`${messages} messages, ${protocol}, load ${(await import('node:os')).loadavg()[0].toFixed(1)}`);
    for (const [what, micros] of rows) console.log(`${what.padEnd(84)} ${micros.toFixed(1)} µs`);
    console.log(`tracing on adds: API ${(on.api - off.api).toFixed(1)} µs, worker ${(on.worker + flushPerMessage - off.worker).toFixed(1)} µs per message (whole run ${((total.user + total.system) / messages).toFixed(1)} µs)`);
  } finally {
    sink.stop();
  }
}

void main();
