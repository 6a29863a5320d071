import { isSlowLane, slowLaneAttemptTimeoutMs, slowLaneTaskQueue } from '../../src/delivery/slow-lane';

describe('the slow lane of a delivery task queue', () => {
  it.each([['switchyard'], ['switchyard-personas'], ['bench-switchyard']])('%s has its own, recognised as a slow lane', (queue) => {
    expect(slowLaneTaskQueue(queue)).not.toBe(queue);
    expect(isSlowLane(slowLaneTaskQueue(queue))).toBe(true);
    expect(isSlowLane(queue)).toBe(false);
  });

  it('gives an attempt one timeout to wait for its room and one to send, plus the grace', () => {
    expect(slowLaneAttemptTimeoutMs(5_000, 5_000)).toBe(15_000);
  });
});
