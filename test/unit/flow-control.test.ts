import { backpressureMs, claimSend, holdExceededReason, holdMsOf, holdWaitMs, IN_ATTEMPT_WAIT_MS, limiterWait, rateIntervalUs, reserveSlot, SEND_AHEAD_US, slotMsOf } from '../../src/delivery/flow-control';
import { parseDeliveryDirective } from '../../src/delivery/delivery-directive';
import { classifyResponse } from '../../src/delivery/outcome';
import { executionTimeoutMs, EXECUTION_GRACE_MS } from '../../src/delivery/retry-window';

describe('rate limit arithmetic (GCRA without burst, µs slots)', () => {
  it.each([
    [1, 1_000_000],
    [5, 200_000],
    [3, 333_334],
    [1_000, 1_000],
    [3_000, 334],
    [5_000, 200],
    [7_000, 143],
    [10_000, 100],
  ])('%i requests per second are one every %i µs (rounded up, never faster)', (rate, interval) => {
    expect(rateIntervalUs(rate)).toBe(interval);
  });

  it('spaces limits above 1,000/s closer than a millisecond: a second holds (to 1 %) as many slots as the limit, never more', () => {
    for (const rate of [1_500, 2_500, 5_000, 9_999, 10_000]) {
      expect(rateIntervalUs(rate)).toBeLessThan(1_000);
      const slotsInASecond = Math.floor(1_000_000 / rateIntervalUs(rate));
      expect(slotsInASecond).toBeGreaterThanOrEqual(0.99 * rate);
      expect(slotsInASecond).toBeLessThanOrEqual(rate);
    }
  });

  it.each([
    ['no state yet: now', undefined, 1_000, 200, 10_000, { slotUs: 1_000, reserved: true, nextSlotUs: 1_200 }],
    ['the next slot has passed: now', 500, 1_000, 200, 10_000, { slotUs: 1_000, reserved: true, nextSlotUs: 1_200 }],
    ['the next slot is ahead: that slot', 1_600, 1_000, 200, 10_000, { slotUs: 1_600, reserved: true, nextSlotUs: 1_800 }],
    ['exactly the hold left away: taken', 3_000, 1_000, 200, 2_000, { slotUs: 3_000, reserved: true, nextSlotUs: 3_200 }],
    ['beyond the hold left: not taken, state unchanged', 3_001, 1_000, 200, 2_000, { slotUs: 3_001, reserved: false, nextSlotUs: 3_001 }],
  ])('reserveSlot: %s', (_name, next, now, interval, maxWait, expected) => {
    expect(reserveSlot(next, now, interval, maxWait)).toEqual(expected);
  });

  it.each([
    [5, 60, [0, 200_000, 400_000, 600_000, 800_000, 1_000_000], 59 * 200_000],
    [5_000, 50, [0, 200, 400, 600, 800, 1_000], 49 * 200],
    [10_000, 100, [0, 100, 200, 300, 400, 500], 99 * 100],
  ])('hands %i/s askers at one instant (%i of them) slots one interval apart, no burst', (rate, askers, firstSix, last) => {
    let next: number | undefined;
    const slots: number[] = [];
    for (let i = 0; i < askers; i++) {
      const slot = reserveSlot(next, 0, rateIntervalUs(rate), Number.MAX_SAFE_INTEGER);
      slots.push(slot.slotUs);
      next = slot.nextSlotUs;
    }
    expect(slots.slice(0, 6)).toEqual(firstSix);
    expect(slots.at(-1)).toBe(last);
  });

  it.each([
    ['first send', undefined, 1_000, 200, { claimed: true, sendAtUs: 1_000, waitUs: 0, lastSendUs: 1_000 }],
    ['an interval after the last', 800, 1_000, 200, { claimed: true, sendAtUs: 1_000, waitUs: 0, lastSendUs: 1_000 }],
    ['100 µs too soon (10,000/s): claimed an interval after the last, waits the rest', 900, 900, 100, { claimed: true, sendAtUs: 1_000, waitUs: 100, lastSendUs: 1_000 }],
    [`just under a timer tick (${SEND_AHEAD_US} µs) away: claimed`, 1_000, 1_000, SEND_AHEAD_US - 1, { claimed: true, sendAtUs: 1_000 + SEND_AHEAD_US - 1, waitUs: SEND_AHEAD_US - 1, lastSendUs: 1_000 + SEND_AHEAD_US - 1 }],
    ['a timer tick away: not claimed, ask again after the wait', 1_000, 1_000, SEND_AHEAD_US, { claimed: false, sendAtUs: 2_000, waitUs: SEND_AHEAD_US, lastSendUs: 1_000 }],
    ['too soon under 5/s: not claimed, the rest of the interval', 900_000, 1_000_000, 200_000, { claimed: false, sendAtUs: 1_100_000, waitUs: 100_000, lastSendUs: 900_000 }],
  ])('claimSend: %s', (_name, last, now, interval, expected) => {
    expect(claimSend(last, now, interval)).toEqual(expected);
  });

  it('claims ten sends asked in one instant under 10,000/s 100 µs apart, and refuses the eleventh', () => {
    let last: number | undefined;
    const claims = Array.from({ length: 11 }, () => {
      const claim = claimSend(last, 0, rateIntervalUs(10_000));
      last = claim.lastSendUs;
      return claim;
    });
    expect(claims.slice(0, 10).map((c) => [c.claimed, c.sendAtUs])).toEqual(Array.from({ length: 10 }, (_c, i) => [true, i * 100]));
    expect(claims[10]).toMatchObject({ claimed: false, waitUs: 1_000 });
  });

  it.each([
    // name, waited inside the attempt so far (ms), the limiter's wait (µs) → what the attempt does
    ['a slot now', 0, 0, 'none'],
    ['a slot 100 µs ahead (10,000/s): no sleep of its own, the claim waits for its moment', 0, 100, 'none'],
    ['a slot just under a timer tick ahead', 0, SEND_AHEAD_US - 1, 'none'],
    ['a timer tick ahead: slept here', 0, SEND_AHEAD_US, 'here'],
    [`${IN_ATTEMPT_WAIT_MS} ms ahead: slept here`, 0, IN_ATTEMPT_WAIT_MS * 1_000, 'here'],
    [`${IN_ATTEMPT_WAIT_MS} ms and 1 µs ahead: a hold`, 0, IN_ATTEMPT_WAIT_MS * 1_000 + 1, 'hold'],
    ['waits adding up past the bound: a hold', 15, 5_001, 'hold'],
    ['waits adding up to the bound: slept here', 15, 5_000, 'here'],
  ])('limiterWait: %s', (_name, waited, wait, expected) => {
    expect(limiterWait(waited, wait)).toBe(expected);
  });

  it.each([
    ['a hold never ends before its slot: rounded up to the millisecond', 1, 1],
    ['a whole millisecond', 20_000, 20],
    ['20 ms and 1 µs', 20_001, 21],
  ])('holdMsOf: %s', (_name, waitUs, ms) => {
    expect(holdMsOf(waitUs)).toBe(ms);
  });

  it('names a reserved µs slot by the epoch millisecond it falls in, as reservedSlotMs did before µs slots', () => {
    expect(slotMsOf(1_764_300_000_000_999)).toBe(1_764_300_000_000);
    expect(slotMsOf(1_764_300_000_001_000)).toBe(1_764_300_000_001);
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
