import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { createFunctionSandbox } from '../src/functions/function-sandbox';
import type { SandboxPool } from '../src/functions/sandbox-pool';

/**
 * What a function costs in the real sandbox (FUNCTION_THREADS=2, a 1 s limit so the looping case is
 * short): `npx tsx bench/function-cost.ts`. Prints the process's CPU per invocation of a trivial
 * handler and of a lodash-heavy one (the sandbox threads are in this process, so process CPU counts
 * them), the cold start of a new version (its first invocation: a new session compiles the code and
 * starts its module state), and what an infinite loop hitting the limit does to other calls: their
 * p99 and this process's event loop delay, beside the same calls without it.
 */
const TIMEOUT_MS = 1_000;
const TRIVIAL = 'async function onTrack(event, settings) { event.properties.tag = settings.tag; return event; }';
const LODASH = `async function onTrack(event, settings) {
  const items = _.range(200).map((i) => ({ sku: 'sku-' + (i % 17), qty: i % 5, price: i * 1.5 }));
  const bySku = _.groupBy(items, 'sku');
  const totals = _.mapValues(bySku, (rows) => _.sumBy(rows, (r) => r.qty * r.price));
  return _.merge(_.cloneDeep(event), { properties: { totals: _.pick(totals, _.take(_.keys(totals), 5)), top: _.maxBy(items, 'price') } });
}`;
const LOOP = 'async function onTrack(event) { for (;;) {} }';
const event = { type: 'track', event: 'Order Completed', messageId: 'm-1', userId: 'u-1', properties: { orderId: 'o-1', total: 42.5 } };

const call = (pool: SandboxPool, sessionKey: string, code: string) => pool.run({ sessionKey, code, handler: 'onTrack', input: event, settings: { tag: 'bench' } });

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function cpuPerCall(pool: SandboxPool, code: string, label: string, calls: number): Promise<void> {
  for (let i = 0; i < 20; i++) await call(pool, `warm-${label}`, code);
  const before = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < calls; i++) {
    const result = await call(pool, `warm-${label}`, code);
    if (result.status !== 'ok') throw new Error(`${label}: ${JSON.stringify(result.error)}`);
  }
  const used = process.cpuUsage(before);
  console.log(`${label}: ${((used.user + used.system) / calls).toFixed(0)} µs CPU per invocation (process), ${(((performance.now() - started) * 1000) / calls).toFixed(0)} µs wall, ${calls} sequential calls`);
}

async function coldStart(pool: SandboxPool, code: string, label: string, versions: number): Promise<void> {
  const times: number[] = [];
  for (let v = 0; v < versions; v++) {
    // A new version is new code under a new session key: nothing of it is compiled or cached yet.
    const started = performance.now();
    const result = await call(pool, `cold-${label}-${v}`, `${code}\n// version ${v}`);
    times.push(performance.now() - started);
    if (result.status !== 'ok') throw new Error(`${label}: ${JSON.stringify(result.error)}`);
  }
  console.log(`cold start, ${label}: first invocation of a new version p50 ${percentile(times, 50).toFixed(1)} ms, max ${Math.max(...times).toFixed(1)} ms (${versions} versions)`);
}

/** Other calls, 20 sessions spread over both threads, for `ms`, beside `looping` functions that each loop until the limit, again and again. */
async function neighbours(pool: SandboxPool, ms: number, looping: number): Promise<void> {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const latencies: number[] = [];
  const until = performance.now() + ms;
  let timeouts = 0;
  const loops = looping
    ? Array.from({ length: looping }, async (_, k) => {
        while (performance.now() < until) if ((await call(pool, `loop-${k}`, LOOP)).error?.type === 'Timeout') timeouts++;
      })
    : [];
  const others = Array.from({ length: 4 }, async (_, k) => {
    for (let i = 0; performance.now() < until; i++) {
      const started = performance.now();
      await call(pool, `neighbour-${(k * 5 + i) % 20}`, TRIVIAL);
      latencies.push(performance.now() - started);
    }
  });
  await Promise.all([...loops, ...others]);
  delay.disable();
  console.log(
    `${looping ? `beside ${looping} looping function(s)` : 'alone'}: ${latencies.length} other calls, p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms; event loop delay p99 ${(delay.percentile(99) / 1e6).toFixed(1)} ms, max ${(delay.max / 1e6).toFixed(1)} ms${looping ? `; ${timeouts} loop invocations ended as timeouts` : ''}`,
  );
}

async function main(): Promise<void> {
  const pool = createFunctionSandbox({ functionThreads: 2, functionTimeout: TIMEOUT_MS, functionMemoryLimit: 64, egressAllowlist: ['127.0.0.0/8'] });
  try {
    await cpuPerCall(pool, TRIVIAL, 'trivial handler', 2_000);
    await cpuPerCall(pool, LODASH, 'lodash-heavy handler', 500);
    await coldStart(pool, TRIVIAL, 'trivial', 20);
    await coldStart(pool, LODASH, 'lodash (loads lodash on first use)', 20);
    for (const sessionKey of Array.from({ length: 20 }, (_, i) => `neighbour-${i}`)) await call(pool, sessionKey, TRIVIAL);
    await neighbours(pool, 5_000, 0);
    await neighbours(pool, 5_000, 1);
    await neighbours(pool, 5_000, 2);
  } finally {
    await pool.close();
  }
}

void main();
