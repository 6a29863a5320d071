import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { temporal } from '@temporalio/proto';
import type { Client } from '@temporalio/client';
import { request } from 'undici';
import type { PhaseResult } from './phase';
import { round } from './stats';

/**
 * `npm run bench -- --noisy` (no noisy neighbours): a healthy destination receiving
 * single calls at --rate (default 20/s), measured alone, then beside a destination of another
 * source whose receiver hangs until the delivery timeout on every request, with a backlog of
 * --backlog messages (default 2,000) accepted and waiting.
 */

/** A receiver that never answers: every attempt to it lasts the whole delivery timeout. */
export async function startHangingReceiver(): Promise<{ url: string; received: () => number; close: () => void }> {
  let received = 0;
  const server = http.createServer(() => {
    received++;
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received: () => received,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

/**
 * Sends `count` messages to a source in batches of 100 (re-sent on 503, as Segment's clients do),
 * message ids `<idPrefix><i>`: the noisy scenario's backlog, the replay scenario's archive.
 */
export async function sendBacklog(apiUrl: string, writeKey: string, count: number, idPrefix: string, users = 97): Promise<void> {
  const authorization = `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`;
  for (let first = 0; first < count; first += 100) {
    const batch = Array.from({ length: Math.min(100, count - first) }, (_, k) => ({ type: 'track', userId: `${idPrefix}user-${(first + k) % users}`, event: 'Backlog', properties: { position: first + k }, messageId: `${idPrefix}${first + k}` }));
    for (let attempt = 0; ; attempt++) {
      const response = await request(`${apiUrl}/v1/batch`, { method: 'POST', headers: { authorization, 'content-type': 'application/json' }, body: JSON.stringify({ batch }) });
      const text = await response.body.text();
      if (response.statusCode === 200) break;
      if (attempt >= 10 || response.statusCode < 500) throw new Error(`/v1/batch answered ${response.statusCode}: ${text}`);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }
}

/**
 * Resolves once the backlog's deliveries have all had their first workflow task: the delivery
 * queue's workflow-task backlog stays under a handful for three looks in a row. What is measured
 * next is a hanging destination with messages waiting, not also the burst that brought them.
 */
export async function backlogSettled(client: Client, taskQueue: string, timeoutMs: number): Promise<number> {
  const started = Date.now();
  let quiet = 0;
  while (quiet < 3) {
    if (Date.now() - started > timeoutMs) throw new Error(`the backlog did not settle within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const { stats } = await client.workflowService.describeTaskQueue({
      namespace: client.options.namespace,
      taskQueue: { name: taskQueue },
      taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
      reportStats: true,
    });
    quiet = Number(stats?.approximateBacklogCount ?? 0) < 5 ? quiet + 1 : 0;
  }
  return Date.now() - started;
}

export interface NoisyRow {
  run: string;
  messages: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  missing: number;
}

export const noisyRow = (run: string, result: PhaseResult): NoisyRow => ({ run, messages: result.messages, ...result.endToEnd.latencyMs, missing: result.missing });

/** One measured window as a markdown row: latency percentiles in whole ms, and what went missing. */
export const latencyLine = (r: NoisyRow) => `| ${r.run} | ${r.messages} | ${round(r.p50, 0)} | ${round(r.p95, 0)} | ${round(r.p99, 0)} | ${round(r.max, 0)} | ${r.missing} |`;

/** The healthy destination's end-to-end latency alone and beside the hanging backlog, with the p99 ratio (goal: at most 1.5). */
export function noisyTable(alone: NoisyRow, beside: NoisyRow): string {
  return [
    '| healthy destination | messages | p50 ms | p95 ms | p99 ms | max ms | missing |',
    '|---|---:|---:|---:|---:|---:|---:|',
    latencyLine(alone),
    latencyLine(beside),
    `| beside / alone | | ${round(beside.p50 / alone.p50, 2)}× | ${round(beside.p95 / alone.p95, 2)}× | **${round(beside.p99 / alone.p99, 2)}×** | ${round(beside.max / alone.max, 2)}× | |`,
  ].join('\n');
}
