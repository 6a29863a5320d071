import { faultDir } from '../helpers/faults';
import { isolationScenario } from '../helpers/scenarios';

/**
 * Per-destination isolation: a receiver that hangs, resets connections or answers slowly must not
 * slow delivery to the others. The worker is this file's own, with few slots so that starving them
 * would show within seconds: 6 activity and 6 workflow task slots, at most 2 attempts per webhook
 * URL at once (WORKER_MAX_IN_FLIGHT_PER_WEBHOOK). scripts/faults.ts runs the same for minutes.
 */

const PER_WEBHOOK = 2;
const TIMEOUT_MS = 8_000;

it('keeps the healthy destination flat while others hang, reset connections or answer slowly', async () => {
  const figures = await isolationScenario({
    dir: faultDir('isolation'),
    slots: 6,
    perWebhook: PER_WEBHOOK,
    timeoutMs: TIMEOUT_MS,
    healthyMessages: 30,
    healthyGapMs: 150,
    // Without the per-webhook cap, hang and slow alone would take more than all the worker's slots.
    badBurst: 2 * PER_WEBHOOK,
    badGapMs: 60_000,
  });
  console.log(`isolation: ${JSON.stringify(figures)}`);

  // The misbehaving receivers really were sent to, but never held more than their share of slots.
  for (const r of Object.values(figures.badReceivers)) {
    expect(r.received).toBeGreaterThanOrEqual(PER_WEBHOOK);
    expect(r.maxOpenAtOnce).toBeLessThanOrEqual(PER_WEBHOOK);
  }
  // No healthy message waited behind a hung attempt: that wait would be a whole delivery timeout
  // (measured without the local-attempt rule: one hanging first attempt held the worker's intake
  // of new workflows, healthy p50 34 s). The typical message is not held up either.
  expect(figures.underFaults.max).toBeLessThan(TIMEOUT_MS);
  expect(figures.underFaults.p50).toBeLessThan(figures.baseline.p50 + 2_000);
}, 300_000);
