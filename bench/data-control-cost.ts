/**
 * Where the CPU of consent, suppression and filters at ingest goes, per message, without HTTP or Temporal around
 * it: the decision alone, and a /v1/batch's planning (destinations and filters read, the decision
 * per message, bodies sealed) for the bench's governed destination (consent and 10 filters,
 * bench/governed-destination.ts) against a destination without either. The whole cost is
 * `npm run bench -- --systems switchyard,governed` (docs/performance.md); this names its parts.
 *
 *   npx tsx bench/data-control-cost.ts [--iterations N]
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { deliveryPolicy, loadConfig } from '../src/config';
import type { MessageBody } from '../src/delivery/types';
import { destinationRulesReader } from '../src/messages/destination-rules';
import { deliveryPlanner, outgoing } from '../src/messages/plan-deliveries';
import { bodySealer } from '../src/messages/seal-bodies';
import { loadKeyring } from '../src/privacy/load-keyring';
import { decideDelivery } from '../src/rules/delivery-decision';
import { compileFilter, type CompiledFilter, type FilterSettings } from '../src/rules/destination-filters';
import { openStore } from '../src/store';
import { cpuMicros } from './cpu-micros';
import { GOVERNED_CONSENT, GOVERNED_FILTERS } from './governed-destination';

/** The bench's message (bench/phase.ts) as the API accepted it, with or without consent preferences. */
const message = (i: number, consent: boolean) => ({
  type: 'track' as const,
  messageId: `b-${i}`,
  userId: `user-${i}`,
  event: 'Order Completed',
  properties: { orderId: `order-${i}`, total: 42.5, currency: 'EUR', items: 3 },
  context: { library: { name: 'switchyard-bench', version: '1' }, ...(consent && { consent: { categoryPreferences: { analytics: true, advertising: true, functional: true } } }) },
  timestamp: new Date().toISOString(),
  receivedAt: new Date().toISOString(),
});

async function main(): Promise<void> {
  const at = process.argv.indexOf('--iterations');
  const iterations = at > 0 ? Number(process.argv[at + 1]) : 20_000;
  const config = loadConfig({ PAYLOAD_KEYS: `bench-1=${randomBytes(32).toString('base64')}` });
  const keyring = loadKeyring(config)!;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-data-control-cost-'));
  const store = await openStore({ databasePath: path.join(dir, 'store.db'), keyring });
  try {
    const compiled: CompiledFilter[] = GOVERNED_FILTERS.map((filter, i) => {
      const result = compileFilter(`f${i}`, filter as FilterSettings);
      if (!result.ok) throw new Error(result.error.message);
      return result.filter;
    });
    const governedBody = message(1, true) as MessageBody;
    const plainBody = message(1, false) as MessageBody;
    const decisionRows: [string, number][] = [
      ['decision, no consent categories, no filters', await cpuMicros(iterations, () => decideDelivery({ body: plainBody, integrations: undefined, suppressed: false, destination: { consent: { categories: [], whenAbsent: 'deliver' }, filters: [] } }))],
      ['decision, consent and 10 filters', await cpuMicros(iterations, () => decideDelivery({ body: governedBody, integrations: undefined, suppressed: false, destination: { consent: GOVERNED_CONSENT, filters: compiled } }))],
    ];

    // A batch of 100 through the planner, as the API plans it: one source each, keys already made.
    const plainSource = await store.sources.create('plain');
    await store.destinations.create(plainSource.source.id, { enabled: true, webhooks: [{ url: 'http://127.0.0.1/hook', headers: {} }] });
    const governedSource = await store.sources.create('governed');
    const governed = await store.destinations.create(governedSource.source.id, { enabled: true, consent: GOVERNED_CONSENT, webhooks: [{ url: 'http://127.0.0.1/hook', headers: {} }] });
    for (const filter of GOVERNED_FILTERS) await store.destinationFilters.create(governed.id, filter as FilterSettings, 10);
    const planner = deliveryPlanner(store.destinations, deliveryPolicy(config), bodySealer(store.dataKeys, keyring), {
      rulesOf: destinationRulesReader(store.destinationFilters, () => undefined),
    });
    const batch = (consent: boolean) => Array.from({ length: 100 }, (_, i) => outgoing(message(i, consent), { suppressed: false }));
    const [plainBatch, governedBatch] = [batch(false), batch(true)];
    await planner(plainSource.source.id, plainBatch);
    await planner(governedSource.source.id, governedBatch);
    const planRows: [string, number][] = [
      ['a batch of 100 planned, destination without rules, per call', (await cpuMicros(iterations / 100, () => planner(plainSource.source.id, plainBatch))) / 100],
      ['a batch of 100 planned, consent and 10 filters, per call', (await cpuMicros(iterations / 100, () => planner(governedSource.source.id, governedBatch))) / 100],
    ];
    const table = (title: string, lines: [string, number][]) => `| ${title} | CPU µs per message |\n|---|---:|\n${lines.map(([step, micros]) => `| ${step} | ${micros.toFixed(1)} |`).join('\n')}`;
    console.log(`${table('step', [...decisionRows, ...planRows])}`);
    console.log(
      `\nconsent and 10 filters add about ${(planRows[1][1] - planRows[0][1]).toFixed(0)} µs of API CPU per call at planning (${os.cpus().length} × ${os.cpus()[0]?.model}, load ${os.loadavg()[0].toFixed(1)})`,
    );
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
