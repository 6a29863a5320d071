import { drillBroken } from '../helpers/fault-drill';
import { faultDir } from '../helpers/faults';
import { networkCutScenario } from '../helpers/network-cut-scenario';

/**
 * The network between a worker and Temporal, then between an API and Temporal, cut under
 * steady single calls (10 s each here; `npx tsx scripts/faults.ts network-cut` cuts for 30 s).
 */

const log = (line: string) => process.stdout.write(`${line}\n`);

it('loses nothing when the network to Temporal is cut, first the worker\'s then the API\'s: the API answers 503 with Retry-After while cut off, and every acknowledged call is delivered once it is back', async () => {
  const figures = await networkCutScenario({ dir: faultDir('network-cut'), rate: 10, seconds: 36, cutMs: 10_000, log });
  log(`network cut: ${JSON.stringify(figures)}`);
  expect(drillBroken(figures)).toEqual([]);
  expect(figures.unavailableCodes).toEqual(['temporal_unavailable']);
  // Calls acknowledged while the worker was cut off waited for it: the delay shows they were held, not lost.
  expect(figures.maxDelayMs).toBeGreaterThan(5_000);
}, 600_000);
