import { IN_ATTEMPT_WAIT_MS, makeAdmission } from '../../src/activities/admit-attempt';
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
});

/**
 * The admission with a scripted limiter (the slot reserveSlot hands out, then what each claimSend
 * answers) and a clock whose sleeps only move time: what it returns, and what it slept.
 */
async function admitWith(dest: Destination, slotAheadMs: number | undefined, claims: number[], req: AttemptRequest = request) {
  let now = NOW;
  const slept: number[] = [];
  const asked: string[] = [];
  const flowControl: Store['flowControl'] = {
    async reserveSlot() {
      asked.push('reserve');
      return { slotMs: now + (slotAheadMs ?? 0), waitMs: slotAheadMs ?? 0, reserved: slotAheadMs !== undefined };
    },
    async claimSend() {
      asked.push('claim');
      return claims.shift() ?? 0;
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
  it.each([
    // name, max requests/s, slot ahead, claimSend answers → hold, sleeps
    ['the slot is now: sent at once', 50, 0, [0], undefined, []],
    ['a slot 1 ms ahead (two asks in one millisecond at 1,000/s): waited here, then sent', 1_000, 1, [0], undefined, [1]],
    [`a slot ${IN_ATTEMPT_WAIT_MS} ms ahead: waited here`, 50, IN_ATTEMPT_WAIT_MS, [0], undefined, [IN_ATTEMPT_WAIT_MS]],
    [`a slot ${IN_ATTEMPT_WAIT_MS + 1} ms ahead: a hold that keeps the slot`, 40, IN_ATTEMPT_WAIT_MS + 1, [], { reason: 'throttled', waitMs: IN_ATTEMPT_WAIT_MS + 1, reservedSlotMs: NOW + IN_ATTEMPT_WAIT_MS + 1 }, []],
    ["another worker's send in the slot: its 5 ms waited here, then sent", 100, 0, [5, 0], undefined, [5]],
    ['waits adding up past the bound: a hold for what is left', 100, 10, [5, 8], { reason: 'throttled', waitMs: 8, reservedSlotMs: NOW + 10 }, [10, 5]],
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
    const { hold, asked } = await admitWith(destination(10), 500, [0], { ...request, reservedSlotMs: NOW });
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
      reserveSlot: async () => ({ slotMs: 0, waitMs: 0, reserved: true }),
      claimSend: async () => 0,
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
