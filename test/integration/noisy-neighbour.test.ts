import { faultDir } from '../helpers/faults';
import { noisyNeighbourScenario } from '../helpers/noisy-neighbour';

const TIMEOUT_MS = 1_500;

it('a hanging destination with a backlog does not delay another destination', async () => {
  const figures = await noisyNeighbourScenario({
    dir: faultDir('noisy-neighbour'),
    backlog: Number(process.env.NOISY_BACKLOG ?? 300),
    timeoutMs: TIMEOUT_MS,
    healthyMessages: 40,
    healthyGapMs: 100,
    temporalArgs: (process.env.NOISY_TEMPORAL_ARGS ?? '').split(' ').filter(Boolean),
    log: (line) => console.log(line),
  });
  console.log(`noisy neighbour: ${JSON.stringify(figures)}`);
  expect(figures.hangingRequests).toBeGreaterThan(0);
  expect(figures.besideBacklog.p95).toBeLessThan(figures.alone.p95 * 2 + 1_000);
}, 300_000);
