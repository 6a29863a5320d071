import { faultDir } from '../helpers/faults';
import { apiKillScenario, temporalRestartScenario, workerKillScenario } from '../helpers/scenarios';

/**
 * Faults on real processes: this file's own worker, API and Temporal dev server (the run's shared
 * ones are never touched). Counts are scaled down for `npm test`; scripts/faults.ts runs the same
 * scenarios at full size (docs/reliability.md). Each rule needs only that its fault lands mid-run
 * (a kill at a third delivered or accepted, Temporal stopped with a quarter delivered): 120, 200 and
 * 100 messages keep that at a fraction of the CPU.
 */

const log = (line: string) => process.stdout.write(`${line}\n`);

it('loses nothing when the worker is SIGKILLed mid-run; only attempts in flight at the kill arrive twice, unchanged', async () => {
  const figures = await workerKillScenario({ messages: 120, dir: faultDir('worker-kill'), log });
  log(`worker kill: ${JSON.stringify(figures)}`);
  expect(figures.deliveredAtKill).toBeLessThan(figures.messages);
  expect(figures.lost).toBe(0);
  expect(figures.duplicatedNotInFlight).toBe(0);
  expect(figures.duplicatesThatDiffer).toBe(0);
}, 600_000);

it('delivers every message of every 200 when the API process is SIGKILLed mid-ingest, each once', async () => {
  const figures = await apiKillScenario({ batches: 20, batchSize: 10, dir: faultDir('api-kill'), log });
  log(`API kill: ${JSON.stringify(figures)}`);
  expect(figures.acceptedBeforeKill).toBeLessThan(figures.messages);
  expect(figures.lostOf200).toBe(0);
  expect(figures.deliveredTwice).toBe(0);
}, 600_000);

it('answers 503 while Temporal is down, accepts the retries once it is back, and loses nothing accepted', async () => {
  // A 2 s start timeout: each probe while Temporal is down hears its 503 in 2 s, not the default 10.
  const figures = await temporalRestartScenario({ messages: 100, dir: faultDir('temporal-restart'), log, startTimeoutMs: 2_000 });
  log(`Temporal restart: ${JSON.stringify(figures)}`);
  for (const reply of figures.whileDown) expect(reply).toEqual({ status: 503, retryAfter: expect.stringMatching(/^\d+$/), code: 'temporal_unavailable' });
  expect(figures.healthWhileDown).toBe(503);
  expect(figures.retriesUntilAccepted).toBeGreaterThan(0);
  expect(figures.lost).toBe(0);
}, 600_000);
