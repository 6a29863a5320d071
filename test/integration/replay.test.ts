import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Worker, type ReplayResult } from '@temporalio/worker';
import { historyFromJSON } from '../helpers/histories';
import { testDataConverter } from '../helpers/payload-keys';

/**
 * Replay safety: histories recorded from real runs (scripts/record-histories.ts) replayed against
 * today's workflow code. A workflow change that issues different commands for the same history
 * (another order of activities, timers or markers; a new sleep; a renamed workflow type) would
 * break the deliveries and syncs already running when it is deployed, and fails here first.
 * Integration project: the workflow bundle is built with webpack (seconds). The histories are
 * encrypted with the committed test key (test/fixtures/payload-keys) and replayed through the codec,
 * as a worker reads them.
 */
const DIR = path.resolve(__dirname, '../fixtures/histories');

/** Every scenario a running workflow may be in; a missing fixture fails too. */
const SCENARIOS = [
  'deliver-first-try-local-activity',
  'deliver-first-try-local-deferred',
  'deliver-first-try-activity',
  'deliver-failover-second-url',
  'deliver-retry-rounds',
  'deliver-retry-window-exhausted',
  'deliver-destination-switched-off',
  // Issue 12's delivery rules, recorded with their patches (deliverMessage).
  'deliver-hard-window-exhausted',
  'deliver-busy-waits-its-turn',
  'deliver-lost-first-attempt-keeps-failover',
  // Issue 15: a delivery that succeeds writes no last status (policy.deliveredImplied).
  'deliver-delivered-implied-first-try',
  'deliver-delivered-implied-after-retry',
  'sync-audience-continued-as-new.run-1',
  'sync-audience-continued-as-new.run-2',
  'sync-computed-trait',
  // Issue 14's bulk redelivery job: a page, a wait, a check of its redeliveries (redeliverMatching).
  'redeliver-matching',
];

const results = new Map<string, ReplayResult>();

beforeAll(async () => {
  const histories = SCENARIOS.map((workflowId) => ({ workflowId, history: historyFromJSON(JSON.parse(readFileSync(path.join(DIR, `${workflowId}.json`), 'utf8'))) }));
  for await (const result of Worker.runReplayHistories({ workflowsPath: require.resolve('../../src/workflows'), dataConverter: testDataConverter(), replayName: 'replay-test' }, histories)) {
    results.set(result.workflowId, result);
  }
}, 180_000);

it('has a recorded history for every scenario, and no history without a scenario', () => {
  expect(readdirSync(DIR).filter((f) => f.endsWith('.json')).map((f) => f.replace(/\.json$/, '')).sort()).toEqual([...SCENARIOS].sort());
});

it.each(SCENARIOS)('today\'s workflow code replays %s', (scenario) => {
  const result = results.get(scenario);
  expect(result).toBeDefined();
  if (result?.error) throw result.error;
});
