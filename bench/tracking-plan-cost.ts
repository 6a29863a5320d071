/**
 * What a tracking plan costs the API per event, without HTTP or Temporal around
 * it. A 50-rule plan (49 track events of six typed properties each, one with a pattern and one
 * with a format, and a COMMON rule), compiled once; then the decision alone for a valid event and
 * for one with two violations, and the ingest step (the source's plan read from the store, the
 * decision per message) for a /v1/batch of 100 against the same batch with no plan connected.
 *
 *   npx tsx bench/tracking-plan-cost.ts [--iterations N]   (default 500,000)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { messageBody, type Message } from '../src/delivery/payload';
import { planCalls } from '../src/messages/plan-calls';
import { compilePlan } from '../src/plans/compile-plan';
import { decidePlan } from '../src/plans/plan-decision';
import { sourcePlanReader } from '../src/plans/plan-reader';
import { DEFAULT_CONTROLS } from '../src/plans/schema-controls';
import { openStore } from '../src/store';
import { cpuMicros } from './cpu-micros';
import { planRules, PLAN_RULES } from './tracking-plan-rules';

const RULES = PLAN_RULES;
const RULE_SET = planRules(Array.from({ length: RULES - 1 }, (_, i) => `Event ${i}`));

const message = (i: number, valid: boolean): Message => ({
  type: 'track',
  messageId: `b-${i}`,
  userId: `user-${i}`,
  event: `Event ${i % (RULES - 1)}`,
  properties: valid ? { orderId: `order-${i}`, total: 42.5, currency: 'EUR', items: 3, at: '2026-11-28T10:00:00.000Z' } : { orderId: `ord ${i}`, total: '42.5', currency: 'EUR', items: 3 },
  context: { library: { name: 'switchyard-bench', version: '1' } },
  timestamp: new Date().toISOString(),
  receivedAt: new Date().toISOString(),
});

async function main(): Promise<void> {
  const at = process.argv.indexOf('--iterations');
  // 500,000 by default: at 50,000 (a 5,000-call warm-up) a run measured the optimizing compiler's
  // warm-up as much as the decision, 1.4–2.4 µs a valid event over six runs of the same code.
  const iterations = at > 0 ? Number(process.argv[at + 1]) : 500_000;
  const stamp = new Date().toISOString();
  const compileStarted = process.cpuUsage();
  const plan = compilePlan({ id: 'tp_bench', name: 'bench' }, RULE_SET.map((rule) => ({ ...rule, createdAt: stamp, updatedAt: stamp })));
  const compileCpu = process.cpuUsage(compileStarted);
  const valid = messageBody(message(7, true));
  const violating = messageBody(message(7, false));
  const rows: [string, number][] = [
    [`compile the ${RULES}-rule plan, once per saved revision (ms)`, (compileCpu.user + compileCpu.system) / 1000],
    ['decision, valid event (µs)', await cpuMicros(iterations, () => decidePlan(valid, plan, DEFAULT_CONTROLS))],
    ['decision, event with two violations (µs)', await cpuMicros(iterations, () => decidePlan(violating, plan, DEFAULT_CONTROLS))],
  ];

  const dir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-plan-cost-'));
  const store = await openStore({ databasePath: path.join(dir, 'store.db') });
  try {
    const planned = await store.sources.create('planned');
    const unplanned = await store.sources.create('unplanned');
    const made = await store.trackingPlans.create({ name: 'bench', type: 'LIVE' });
    await store.trackingPlans.replaceRules(made.id, RULE_SET);
    await store.trackingPlans.connect(made.id, planned.source.id);
    const reader = sourcePlanReader(store.trackingPlans);
    const batch = Array.from({ length: 100 }, (_, i) => ({ message: message(i, i % 10 !== 0) }));
    const batches = Math.max(20, iterations / 250);
    rows.push(
      ['ingest step, /v1/batch of 100, plan connected, per message (µs)', (await cpuMicros(batches, () => planCalls(reader, planned.source.id, batch))) / 100],
      ['ingest step, /v1/batch of 100, no plan, per message (µs)', (await cpuMicros(batches, () => planCalls(reader, unplanned.source.id, batch))) / 100],
    );
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}; ${iterations} decisions`);
  for (const [name, value] of rows) console.log(`${name.padEnd(70)} ${value.toFixed(2)}`);
}

void main();
