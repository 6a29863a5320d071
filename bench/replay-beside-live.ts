import type { Load, PhaseResult, PhaseRunner } from './phase';
import { latencyLine, noisyRow, sendBacklog, type NoisyRow } from './noisy';
import { round, spread, type Spread } from './stats';
import type { BenchStack, Receipt } from './system';

/**
 * `npm run bench -- --replay N` ("live traffic first"): N messages archived for a source
 * with no destination (a message no destination gets starts no workflow, but is archived), then a
 * destination added to that source and the archive replayed to it (a backfill) while live single
 * calls go to Switchyard's own source in windows of -n messages: windows before the replay, as many
 * as it lasts, and one after it. The replay's deliveries run at a lower Temporal priority with at
 * most REPLAY_MAX_IN_FLIGHT under way; the live windows show what that leaves live traffic.
 */

interface ReplayView {
  id: string;
  status: string;
  matched: number;
  started: number;
  delivered: number;
  failed: number;
  skipped: { erased: number; suppressed: number; filtered: number };
  createdAt: string;
  finishedAt: string | null;
}

export interface ReplayScenario {
  archived: number;
  /** Archiving the N messages through /v1/batch (no destination: archive rows only). */
  archiveSeconds: number;
  /** Live windows, in order. */
  before: NoisyRow[];
  beside: NoisyRow[];
  after: NoisyRow[];
  /** Live p99 per window: beside the replay, against the windows without it (before and after). */
  p99: { without: Spread; beside: Spread; ratio: number };
  /** --replay-for: the minutes after which the replay was cancelled (its counts are as far as it got). */
  cancelledAfterMinutes?: number;
  replay: ReplayView & {
    seconds: number;
    /** Replayed messages the receiver saw per second, from the replay's start to its last receipt. */
    messagesPerSecond: number;
    /** Distinct replayed messages the receiver saw, and how many came again. */
    received: number;
    duplicates: number;
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function runReplayScenario(stack: BenchStack, runner: PhaseRunner, load: Load, count: number, runId: string, log: (line: string) => void, maxMinutes = 0): Promise<{ scenario: ReplayScenario; results: PhaseResult[] }> {
  const idPrefix = `${runId}-replay-`;
  const seen = new Set<string>();
  let duplicates = 0;
  let lastReceipt = 0;
  stack.onReceipts((receipts: Receipt[]) => {
    for (const [id, at] of receipts) {
      if (!id.startsWith(idPrefix)) continue;
      if (seen.has(id)) duplicates++;
      else seen.add(id);
      lastReceipt = Math.max(lastReceipt, at);
    }
  });

  const source = await stack.adminRequest<{ id: string; writeKey: string }>('POST', '/admin/sources', { name: 'bench replayed' });
  const since = new Date(Date.now() - 1_000).toISOString();
  log(`replay: archiving ${count} messages for a source with no destination`);
  const archiveStarted = Date.now();
  await sendBacklog(stack.switchyard.apiUrl, source.writeKey, count, idPrefix, 997);
  const archiveSeconds = (Date.now() - archiveStarted) / 1000;
  const until = new Date(Date.now() + 1_000).toISOString();
  await sleep(1_000);
  log(`replay: archived in ${round(archiveSeconds, 1)} s (${Math.round(count / archiveSeconds)} messages/s); a destination added, the replay starts after the first live window`);
  const destination = await stack.adminRequest<{ id: string }>('POST', `/admin/sources/${source.id}/destinations`, { enabled: true, sharedSecret: 'bench-secret', webhooks: [{ url: stack.receiverUrl }] });

  const results: PhaseResult[] = [];
  let window = 0;
  const live = async () => {
    const result = await runner.run('switchyard', load, ++window);
    results.push(result);
    return result;
  };
  const before = [noisyRow('before the replay', await live())];

  const { id } = await stack.adminRequest<{ id: string }>('POST', '/admin/replays', { sourceId: source.id, destinationId: destination.id, since, until });
  const replayStarted = performance.timeOrigin + performance.now();
  log(`replay ${id}: ${count} messages to the new destination, beside live calls at ${load.rate}/s`);
  const status = () => stack.adminRequest<ReplayView>('GET', `/admin/replays/${id}`);
  const beside: NoisyRow[] = [];
  let view = await status();
  const deadline = maxMinutes > 0 ? Date.now() + maxMinutes * 60_000 : Infinity;
  while (view.status === 'running') {
    if (Date.now() >= deadline) {
      log(`replay ${id}: cancelled after ${maxMinutes} minutes (--replay-for), ${view.delivered} of ${count} delivered`);
      view = await stack.adminRequest<ReplayView>('POST', `/admin/replays/${id}/cancel`);
      break;
    }
    const row = noisyRow(`beside the replay (${view.delivered} of ${view.matched || count} replayed when it began)`, await live());
    beside.push(row);
    view = await status();
  }
  // Cancelled: what was under way still ends; the counts are read once it has.
  for (let waited = 0; view.status === 'cancelled' && view.delivered + view.failed < view.started && waited < 60_000; waited += 1_000) {
    await sleep(1_000);
    view = await status();
  }
  // Its last deliveries may still be closing: wait for every replayed message to have arrived (or the replay's end said otherwise).
  for (let waited = 0; seen.size < view.delivered && waited < 60_000; waited += 500) await sleep(500);
  const after = [noisyRow('after the replay', await live())];
  if (view.status !== 'completed' && !(maxMinutes > 0 && view.status === 'cancelled')) throw new Error(`replay ${id} ended ${view.status}: ${JSON.stringify(view)}`);

  const seconds = (lastReceipt - replayStarted) / 1000;
  const without = spread([...before, ...after].map((r) => r.p99));
  const besideP99 = spread(beside.map((r) => r.p99));
  return {
    results,
    scenario: {
      archived: count,
      ...(view.status === 'cancelled' && { cancelledAfterMinutes: maxMinutes }),
      archiveSeconds: round(archiveSeconds, 1),
      before,
      beside,
      after,
      p99: { without, beside: besideP99, ratio: round(besideP99.median / without.median, 2) },
      replay: { ...view, seconds: round(seconds, 1), messagesPerSecond: round(seen.size / seconds, 1), received: seen.size, duplicates },
    },
  };
}

/** The live windows' latency, then the replay's rate and counts. */
export function replayTable(scenario: ReplayScenario): string {
  const { p99, replay } = scenario;
  return [
    '| live window | messages | p50 ms | p95 ms | p99 ms | max ms | missing |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...[...scenario.before, ...scenario.beside, ...scenario.after].map(latencyLine),
    '',
    `Live p99 beside the replay: median ${round(p99.beside.median, 0)} ms (${round(p99.beside.min, 0)}–${round(p99.beside.max, 0)}) over ${scenario.beside.length} windows, against ${round(p99.without.median, 0)} ms (${round(p99.without.min, 0)}–${round(p99.without.max, 0)}) without: **${p99.ratio}×**.`,
    `The replay${scenario.cancelledAfterMinutes ? ` (cancelled after ${scenario.cancelledAfterMinutes} minutes, --replay-for)` : ''}: ${replay.matched} matched, ${replay.started} started, ${replay.delivered} delivered, ${replay.failed} failed, ${replay.received} received (${replay.duplicates} twice) in ${replay.seconds} s: **${replay.messagesPerSecond} messages/s** beside the live calls. Archiving the ${scenario.archived} messages took ${scenario.archiveSeconds} s.`,
  ].join('\n');
}
