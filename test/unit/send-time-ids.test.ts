import { randomBytes } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { stoppingErasedUsers } from '../../src/activities/erased-users';
import { callIds, ERASED_REASON } from '../../src/delivery/erasure';
import { SUPPRESSED_REASON, type Suppression } from '../../src/delivery/suppression';
import type { AttemptRequest, AttemptResult, MessageBody } from '../../src/delivery/types';
import { sealBody } from '../../src/privacy/sealed-body';

/**
 * The send-time erasure and suppression checks read the call's
 * ids, sealed beside the body, not what a destination's filters left in it. A destination whose
 * filter dropped userId and anonymousId used to skip both checks.
 */
const USER = 'u-send-time';
const accepted = '2026-05-01T12:00:00.000Z';
const call: MessageBody = { type: 'track', messageId: 'm1', userId: USER, anonymousId: 'a-send-time', event: 'E', timestamp: accepted, receivedAt: accepted };
// What a filter dropping the ids (and receivedAt) leaves of it.
const { userId: _u, anonymousId: _a, receivedAt: _r, ...filtered } = call;

function attemptOf(key: Buffer, body: MessageBody, withIds: boolean): AttemptRequest {
  return { destinationId: 'dst_A', webhookIndex: 0, messageId: 'm1', sealedMessage: sealBody(key, 'h1_subject', 'm1', body, undefined, withIds ? callIds('track', call) : undefined), timeoutMs: 1_000, round: 1 };
}

async function attempt(req: AttemptRequest, records: { erasedAt?: string; suppressions?: Suppression[] }, key: Buffer) {
  const sent: unknown[] = [];
  const store = {
    dataKeys: { get: async () => key },
    erasures: { erasedAt: async (ids: string[]) => (ids.includes(USER) ? records.erasedAt : undefined) },
    suppressions: { of: async (ids: string[]) => (ids.includes(USER) ? (records.suppressions ?? []) : []) },
  } as unknown as Parameters<typeof stoppingErasedUsers>[0];
  const send = stoppingErasedUsers(store, async (open) => {
    sent.push(open.message);
    return { destinationEnabled: true, webhookCount: 1, outcome: { kind: 'success', status: 200 } };
  });
  const result = await new MockActivityEnvironment().run<[AttemptRequest], AttemptResult, typeof send>(send, req);
  return { result, sent };
}

describe('send-time checks read the call\'s ids, not what a filter left in the body', () => {
  const key = randomBytes(32);

  it.each<[string, { erasedAt?: string; suppressions?: Suppression[] }, string]>([
    ['erased after the call was accepted', { erasedAt: '2026-05-01T12:00:05.000Z' }, ERASED_REASON],
    ['suppressed now', { suppressions: [{ suppressedAt: '2026-05-01T12:00:05.000Z' }] }, SUPPRESSED_REASON],
  ])('stops a body stripped of its ids when its user was %s', async (_, records, reason) => {
    const { result, sent } = await attempt(attemptOf(key, filtered, true), records, key);
    expect(sent).toEqual([]);
    expect(result.outcome).toEqual({ kind: 'permanent', reason });
  });

  it('sends it when its user was erased before the call (a new call after the regulation)', async () => {
    const { sent } = await attempt(attemptOf(key, filtered, true), { erasedAt: '2026-05-01T11:00:00.000Z' }, key);
    expect(sent).toEqual([filtered]);
  });

  it('still checks a body sealed before the ids were (its own ids)', async () => {
    const { sent, result } = await attempt(attemptOf(key, call, false), { erasedAt: '2026-05-01T12:00:05.000Z' }, key);
    expect(sent).toEqual([]);
    expect(result.outcome).toEqual({ kind: 'permanent', reason: ERASED_REASON });
  });

  it('reads a body sealed under a key since replaced (the user erased, then back) as erased', async () => {
    const { sent, result } = await attempt(attemptOf(randomBytes(32), call, true), {}, key);
    expect(sent).toEqual([]);
    expect(result.outcome).toEqual({ kind: 'permanent', reason: ERASED_REASON });
  });
});
