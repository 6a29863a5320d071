import { backpressureMs, claimSend, holdExceededReason, holdWaitMs, rateIntervalMs, reserveSlot } from '../../src/delivery/flow-control';
import { parseDeliveryDirective } from '../../src/delivery/delivery-directive';
import { classifyResponse } from '../../src/delivery/outcome';
import { executionTimeoutMs, EXECUTION_GRACE_MS } from '../../src/delivery/retry-window';

describe('rate limit arithmetic (GCRA without burst)', () => {
  it.each([
    [1, 1_000],
    [5, 200],
    [3, 334],
    [10_000, 1],
  ])('%i requests per second are one every %i ms (rounded up, never faster)', (rate, interval) => {
    expect(rateIntervalMs(rate)).toBe(interval);
  });

  it.each([
    ['no state yet: now', undefined, 1_000, 200, 10_000, { slotMs: 1_000, reserved: true, nextSlotMs: 1_200 }],
    ['the next slot has passed: now', 500, 1_000, 200, 10_000, { slotMs: 1_000, reserved: true, nextSlotMs: 1_200 }],
    ['the next slot is ahead: that slot', 1_600, 1_000, 200, 10_000, { slotMs: 1_600, reserved: true, nextSlotMs: 1_800 }],
    ['exactly the hold left away: taken', 3_000, 1_000, 200, 2_000, { slotMs: 3_000, reserved: true, nextSlotMs: 3_200 }],
    ['beyond the hold left: not taken, state unchanged', 3_001, 1_000, 200, 2_000, { slotMs: 3_001, reserved: false, nextSlotMs: 3_001 }],
  ])('reserveSlot: %s', (_name, next, now, interval, maxWait, expected) => {
    expect(reserveSlot(next, now, interval, maxWait)).toEqual(expected);
  });

  it('hands 60 askers at one instant slots one interval apart: 5 per second, no burst', () => {
    let next: number | undefined;
    const slots: number[] = [];
    for (let i = 0; i < 60; i++) {
      const slot = reserveSlot(next, 0, rateIntervalMs(5), Number.MAX_SAFE_INTEGER);
      slots.push(slot.slotMs);
      next = slot.nextSlotMs;
    }
    expect(slots.slice(0, 6)).toEqual([0, 200, 400, 600, 800, 1_000]);
    expect(slots.at(-1)).toBe(59 * 200);
  });

  it.each([
    ['first send', undefined, 1_000, { waitMs: 0, lastSendMs: 1_000 }],
    ['an interval after the last', 800, 1_000, { waitMs: 0, lastSendMs: 1_000 }],
    ['too soon after the last: wait the rest', 900, 1_000, { waitMs: 100, lastSendMs: 900 }],
  ])('claimSend: %s', (_name, last, now, expected) => {
    expect(claimSend(last, now, 200)).toEqual(expected);
  });
});

describe('hold accounting', () => {
  const policy = { holdCheckMs: 5_000 };
  it.each([
    ['throttled: the wait it was given', { reason: 'throttled' as const, waitMs: 1_234 }, 1, 60_000, 1_234],
    ['backpressure: the wait it was given', { reason: 'backpressure' as const, waitMs: 4_000 }, 3, 60_000, 4_000],
    ['paused, first check: 0.5 s', { reason: 'paused' as const }, 1, 60_000, 500],
    ['paused, fourth check: doubled to 4 s', { reason: 'paused' as const }, 4, 60_000, 4_000],
    ['paused, long held: capped at holdCheckMs', { reason: 'paused' as const }, 40, 60_000, 5_000],
    ['never past the hold budget left', { reason: 'throttled' as const, waitMs: 9_000 }, 1, 2_500, 2_500],
    ['at least 1 ms (a zero timer would spin)', { reason: 'throttled' as const, waitMs: 0 }, 1, 60_000, 1],
  ])('holdWaitMs: %s', (_name, hold, consecutive, left, expected) => {
    expect(holdWaitMs(hold, consecutive, policy, left)).toBe(expected);
  });

  it('names DELIVERY_MAX_HOLD and why the delivery was held', () => {
    expect(holdExceededReason(2_000, 'paused')).toBe('held longer than DELIVERY_MAX_HOLD (2000 ms); last held because the destination is paused');
    expect(holdExceededReason(2_000, 'throttled')).toContain("destination's maxRequestsPerSecond");
  });

  it('gives a delivery its longest hold on top of the retry window before Temporal times it out', () => {
    expect(executionTimeoutMs({ retryWindowMs: 6_000, maxHoldMs: 10_000 })).toBe(16_000 + EXECUTION_GRACE_MS);
    expect(executionTimeoutMs({ retryWindowMs: 6_000 })).toBe(6_000 + EXECUTION_GRACE_MS);
  });
});

describe('endpoint-wide backpressure', () => {
  it.each([
    ['429 with Retry-After: that long', 429, 5_000, 10_000, 5_000],
    ['503 with Retry-After: that long', 503, 5_000, 10_000, 5_000],
    ['a Retry-After past the bound: the bound', 429, 50_000, 10_000, 10_000],
    ['429 without Retry-After: none', 429, undefined, 10_000, undefined],
    ['Retry-After: 0: none', 503, 0, 10_000, undefined],
    ['500 with Retry-After: only that message waits', 500, 5_000, 10_000, undefined],
  ])('backpressureMs: %s', (_name, status, retryAfter, bound, expected) => {
    expect(backpressureMs(status, retryAfter, bound)).toBe(expected);
  });
});

describe('the webhook-delivery response header', () => {
  it.each([
    ['disable', 'disable'],
    [' Disable ', 'disable'],
    ['abort-message', 'abort-message'],
    [['ABORT-MESSAGE', 'disable'], 'abort-message'],
    ['pause', undefined],
    ['', undefined],
    [undefined, undefined],
  ])('%j is %s', (value, expected) => {
    expect(parseDeliveryDirective(value)).toBe(expected);
  });

  it.each([
    ['disable on a 5xx: permanent, switches the URL off', 503, 'disable', { kind: 'permanent', status: 503, disablesWebhook: true }],
    ['disable on a 2xx: delivered, and the URL switched off', 200, 'disable', { kind: 'success', status: 200, disablesWebhook: true }],
    ['abort-message on a 5xx: permanent for this message only', 500, 'abort-message', { kind: 'permanent', status: 500 }],
    ['abort-message on a 2xx: just delivered', 204, 'abort-message', { kind: 'success', status: 204 }],
  ] as const)('%s', (_name, status, directive, expected) => {
    const outcome = classifyResponse(status, undefined, directive);
    expect(outcome).toMatchObject(expected);
    if (directive === 'abort-message' && outcome.kind === 'permanent') expect(outcome).not.toHaveProperty('disablesWebhook');
  });
});
