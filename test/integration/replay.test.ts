import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Worker, type ReplayResult } from '@temporalio/worker';
import { parseKeyring } from '../../src/privacy/keyring';
import { switchyardDataConverter } from '../../src/temporal/data-converter';
import { historyFromJSON } from '../helpers/histories';
import { testDataConverter } from '../helpers/data-converter';
import { TEST_PAYLOAD_KEYS_FILE } from '../helpers/payload-keys';

/**
 * Replay safety: histories recorded from real runs (scripts/record-histories.ts) replayed against
 * today's workflow code. A workflow change that issues different commands for the same history
 * (another order of activities, timers or markers; a new sleep; a renamed workflow type) would
 * break the deliveries and syncs already running when it is deployed, and fails here first.
 * Integration project: the workflow bundle is built with webpack (seconds).
 *
 * Both sets replay through the codec with the committed test key (test/fixtures/payload-keys), as a
 * worker reads them: the histories recorded encrypted, and the same scenarios recorded
 * before payloads were encrypted, which workflows still running at the upgrade look like (the codec
 * passes their plaintext payloads through).
 */
const DIR = path.resolve(__dirname, '../fixtures/histories');
const SETS = { encrypted: DIR, 'before encryption': path.join(DIR, 'before-encryption') };

/** Every scenario a running workflow may be in; a missing fixture fails too. */
const SCENARIOS = [
  'deliver-first-try-local-activity',
  'deliver-first-try-local-deferred',
  'deliver-first-try-activity',
  'deliver-failover-second-url',
  'deliver-retry-rounds',
  'deliver-retry-window-exhausted',
  'deliver-destination-switched-off',
  // The delivery rules that used to break, recorded with their patches (deliverMessage).
  'deliver-hard-window-exhausted',
  'deliver-busy-waits-its-turn',
  'deliver-lost-first-attempt-keeps-failover',
  // A delivery that succeeds writes no last status (policy.deliveredImplied).
  'deliver-delivered-implied-first-try',
  'deliver-delivered-implied-after-retry',
  'sync-audience-continued-as-new.run-1',
  'sync-audience-continued-as-new.run-2',
  'sync-computed-trait',
  // The bulk redelivery job: a page, a wait, a check of its redeliveries (redeliverMatching).
  'redeliver-matching',
];

/** Scenarios recorded encrypted only: they came after encryption, so no delivery from before it carries them. */
const ENCRYPTED_ONLY = [
  // Flow control (policy.maxHoldMs): held on a paused destination, resumed, then waiting for a rate-limit slot.
  'deliver-held-then-resumed',
  // A busy webhook's attempt made again in the slow lane.
  'deliver-busy-waits-in-slow-lane',
  // A URL that failed in the slow lane starts its next round there.
  'deliver-failed-in-slow-lane-starts-there',
  // A replay of the archive, paused and resumed (replayArchive), and one of its deliveries (input.replay);
  // recorded before replays were paced by live lag, and after (REPLAY_PACED_PATCH).
  'replay-archive',
  'replay-archive-paced',
  'deliver-replayed',
  // An actions destination's two mappings, each its own lane (one retried) in one workflow.
  'deliver-actions-mappings',
  // A traced message whose bodies are in the clear (accepted by an API with PAYLOAD_ENCRYPTION=off): its
  // input carries the trace context, and its two attempts get it under TRACE_CONTEXT_PATCH.
  'deliver-traced-open',
];

const results = new Map<string, ReplayResult>();
const key = (set: string, scenario: string) => `${set}/${scenario}`;
const scenariosOf = (set: string) => (set === 'encrypted' ? [...SCENARIOS, ...ENCRYPTED_ONLY] : SCENARIOS);

beforeAll(async () => {
  // One replay run (one bundle); each history under its set's name.
  const histories = Object.entries(SETS).flatMap(([set, dir]) =>
    scenariosOf(set).map((scenario) => ({ workflowId: key(set, scenario), history: historyFromJSON(JSON.parse(readFileSync(path.join(dir, `${scenario}.json`), 'utf8'))) })),
  );
  for await (const result of Worker.runReplayHistories({ workflowsPath: require.resolve('../../src/workflows'), dataConverter: testDataConverter(), replayName: 'replay-test' }, histories)) {
    results.set(result.workflowId, result);
  }
}, 180_000);

it.each(Object.entries(SETS))('has a %s history for every scenario, and no history without a scenario', (set, dir) => {
  expect(readdirSync(dir).filter((f) => f.endsWith('.json')).map((f) => f.replace(/\.json$/, '')).sort()).toEqual(scenariosOf(set).sort());
});

describe.each(Object.keys(SETS))('recorded %s', (set) => {
  it.each(scenariosOf(set))('today\'s workflow code replays %s', (scenario) => {
    const result = results.get(key(set, scenario));
    expect(result).toBeDefined();
    if (result?.error) throw result.error;
  });
});

describe('key rotation', () => {
  const scenario = 'deliver-retry-rounds';
  const history = () => historyFromJSON(JSON.parse(readFileSync(path.join(DIR, `${scenario}.json`), 'utf8')));
  const keys = readFileSync(TEST_PAYLOAD_KEYS_FILE, 'utf8');
  const newKey = `rotated-2=${randomBytes(32).toString('base64')}`;
  const replayWith = async (keyringText: string) => {
    const dataConverter = switchyardDataConverter(parseKeyring(keyringText));
    try {
      return (await Worker.runReplayHistory({ workflowsPath: require.resolve('../../src/workflows'), dataConverter, replayName: 'replay-rotation' }, history())) ?? 'replayed';
    } catch (err) {
      return err as Error;
    }
  };

  it('replays a history written under the test key once another key is active', async () => {
    const keyring = parseKeyring(`${keys}\n${newKey}`);
    expect(keyring.activeKeyId).toBe('rotated-2');
    expect(await replayWith(`${keys}\n${newKey}`)).toBe('replayed');
  }, 120_000);

  it('fails loudly, naming the key id, once the key it was written under is removed', async () => {
    const failed = await replayWith(newKey);
    expect(failed).toBeInstanceOf(Error);
    // The workflow task failure names the key in plaintext (src/temporal/failure-converter.ts), here in core's debug quoting.
    expect((failed as Error).message).toMatch(/payload encrypted with key \\*"test-1\\*", which is not listed in PAYLOAD_KEYS/);
  }, 120_000);
});
