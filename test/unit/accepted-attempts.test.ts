import { AcceptedAttempts } from '../../src/activities/accepted-attempts';

describe('AcceptedAttempts', () => {
  it('answers with the accepted attempt of a lane within the time it remembers', () => {
    const accepted = new AcceptedAttempts(1_000, 10);
    accepted.remember('run-1 dst_a ', { webhookIndex: 1, status: 204, at: 5_000 });
    expect(accepted.recall('run-1 dst_a ', 6_000)).toEqual({ webhookIndex: 1, status: 204, at: 5_000 });
    expect(accepted.recall('run-1 dst_b ', 6_000)).toBeUndefined();
    expect(accepted.recall('run-2 dst_a ', 6_000)).toBeUndefined();
  });

  it('forgets an attempt older than the time it remembers', () => {
    const accepted = new AcceptedAttempts(1_000, 10);
    accepted.remember('lane', { webhookIndex: 0, status: 200, at: 5_000 });
    expect(accepted.recall('lane', 6_001)).toBeUndefined();
    expect(accepted.recall('lane', 5_500)).toBeUndefined();
  });

  it('keeps at most its bound, forgetting the oldest first', () => {
    const accepted = new AcceptedAttempts(60_000, 3);
    for (let i = 0; i < 5; i++) accepted.remember(`lane-${i}`, { webhookIndex: 0, status: 200, at: i });
    expect([0, 1, 2, 3, 4].map((i) => accepted.recall(`lane-${i}`, 10) !== undefined)).toEqual([false, false, true, true, true]);
  });
});
