import { makeAdmission } from '../../src/activities/admit-attempt';
import { IN_ATTEMPT_WAIT_MS, SEND_AHEAD_US } from '../../src/delivery/flow-control';
import type { AttemptRequest } from '../../src/delivery/types';
import type { Destination, Store } from '../../src/store/types';

const NOW = 1_000_000;
const request: AttemptRequest = { destinationId: 'dst_1', webhookIndex: 0, messageId: 'm-1', message: { type: 'track' }, timeoutMs: 5_000, round: 1, flowControl: true, holdLeftMs: 60_000 };
const destination = (maxRequestsPerSecond: number | null, paused = false): Destination => ({
  id: 'dst_1',
  sourceId: 'src_1',
  name: 'd',
  enabled: true,
  sharedSecret: null,
  signing: null,
  webhooks: [{ url: 'https://example.com/hook', headers: {} }],
  maxRequestsPerSecond,
  paused,
  createdAt: '',
  updatedAt: '',
  consent: { categories: [], whenAbsent: 'deliver' },
  type: 'webhooks',
  mappings: [],
  auth: null,
  tls: null,
  propagateTraceContext: true,
});

/**
 * The admission with a scripted limiter (the slot reserveSlot hands out, µs ahead of now, then the
 * wait each claimSend answers, in µs: claimed when under SEND_AHEAD_US, as the store decides) and a
 * clock whose sleeps only move time: what it returns, and what it slept (ms).
 */
async function admitWith(dest: Destination, slotAheadUs: number | undefined, claims: number[], req: AttemptRequest = request) {
  let now = NOW;
  const slept: number[] = [];
  const asked: string[] = [];
  const flowControl: Store['flowControl'] = {
    async reserveSlot() {
      asked.push('reserve');
      return { slotUs: now * 1_000 + (slotAheadUs ?? 0), waitUs: slotAheadUs ?? 0, reserved: slotAheadUs !== undefined };
    },
    async claimSend() {
      asked.push('claim');
      const waitUs = claims.shift() ?? 0;
      return { claimed: waitUs < SEND_AHEAD_US, sendAtUs: now * 1_000 + waitUs, waitUs };
    },
    async backpressure() {
      return undefined;
    },
    async backpressureLeft() {
      return undefined;
    },
    async clearBackpressure() {
      return false;
    },
  };
  const clock = { now: () => now, sleep: async (ms: number) => void (slept.push(ms), (now += ms)) };
  const hold = await makeAdmission({ flowControl }, undefined, clock)(req, dest, dest.webhooks[0], NOW);
  return { hold, slept, asked };
}

describe('admission of a rate-limited attempt: short waits inside the attempt, longer ones a hold', () => {
  const WAIT_US = IN_ATTEMPT_WAIT_MS * 1_000;
  it.each([
    // name, max requests/s, slot ahead (µs), claimSend answers (µs) → hold, sleeps (ms)
    ['the slot is now: sent at once', 50, 0, [0], undefined, []],
    ['a slot 100 µs ahead (two asks together at 10,000/s): no sleep before the claim, which waits its 100 µs', 10_000, 100, [100], undefined, [0.1]],
    ['a slot 1 ms ahead (two asks in one millisecond at 1,000/s): waited here, then sent', 1_000, 1_000, [0], undefined, [1]],
    [`a slot ${IN_ATTEMPT_WAIT_MS} ms ahead: waited here`, 50, WAIT_US, [0], undefined, [IN_ATTEMPT_WAIT_MS]],
    [`a slot ${IN_ATTEMPT_WAIT_MS} ms and 1 µs ahead: a hold (whole ms, rounded up) that keeps the slot`, 40, WAIT_US + 1, [], { reason: 'throttled', waitMs: IN_ATTEMPT_WAIT_MS + 1, reservedSlotMs: NOW + IN_ATTEMPT_WAIT_MS }, []],
    ["another worker's send in the slot: its 5 ms waited here, then sent", 100, 0, [5_000, 0], undefined, [5]],
    ['waits adding up past the bound: a hold for what is left', 100, 10_000, [5_000, 8_000], { reason: 'throttled', waitMs: 8, reservedSlotMs: NOW + 10 }, [10, 5]],
  ])('%s', async (_name, rate, slotAhead, claims, expected, sleeps) => {
    const { hold, slept } = await admitWith(destination(rate), slotAhead, [...claims]);
    expect(hold).toEqual(expected);
    expect(slept).toEqual(sleeps);
  });

  it('a slot past the hold budget is not reserved: a hold without a slot, nothing waited here', async () => {
    const { hold, slept, asked } = await admitWith(destination(1_000), undefined, []);
    expect(hold).toEqual({ reason: 'throttled', waitMs: 0 });
    expect(slept).toEqual([]);
    expect(asked).toEqual(['reserve']);
  });

  it('a slot reserved by an earlier hold is claimed without reserving another', async () => {
    const { hold, asked } = await admitWith(destination(10), 500_000, [0], { ...request, reservedSlotMs: NOW });
    expect(hold).toBeUndefined();
    expect(asked).toEqual(['claim']);
  });

  it('a paused destination or no rate limit asks the limiter nothing', async () => {
    expect(await admitWith(destination(10, true), 0, [])).toEqual({ hold: { reason: 'paused' }, slept: [], asked: [] });
    expect(await admitWith(destination(null), 0, [])).toEqual({ hold: undefined, slept: [], asked: [] });
  });
});

describe('admission of an attempt to a URL under backpressure', () => {
  const pressedAt = (leftMs: number | undefined) => {
    const asked: string[] = [];
    const flowControl: Store['flowControl'] = {
      reserveSlot: async () => ({ slotUs: 0, waitUs: 0, reserved: true }),
      claimSend: async () => ({ claimed: true, sendAtUs: 0, waitUs: 0 }),
      backpressure: async () => undefined,
      backpressureLeft: async () => (asked.push('left'), leftMs === undefined ? undefined : { untilMs: 7_000_000, leftMs }),
      clearBackpressure: async () => false,
    };
    const dest = destination(null);
    dest.webhooks[0] = { ...dest.webhooks[0], backpressure: { untilMs: 7_000_000, reason: 'HTTP 503 with Retry-After' } };
    return { asked, admit: (req: AttemptRequest) => makeAdmission({ flowControl })(req, dest, dest.webhooks[0], NOW) };
  };

  it.each([
    // name, left by the store's clock, the pause the delivery waited out → hold
    ['a pause with 3 s left: a hold of 3 s from now, naming the pause', 3_000, undefined, { reason: 'backpressure', waitMs: 3_000, pressureUntilMs: 7_000_000 }],
    ['the same pause after the delivery waited it out on its own clock: sent', 3_000, 7_000_000, undefined],
    ['a later pause than the one waited out: held again', 3_000, 6_000_000, { reason: 'backpressure', waitMs: 3_000, pressureUntilMs: 7_000_000 }],
    ['the pause over (or cleared) by the store\'s clock: sent', undefined, undefined, undefined],
  ])('%s', async (_name, leftMs, waitedOut, expected) => {
    const { admit, asked } = pressedAt(leftMs);
    expect(await admit({ ...request, ...(waitedOut !== undefined && { waitedOutPressureMs: waitedOut }) })).toEqual(expected);
    expect(asked).toEqual(['left']);
  });
});
