import { outcomeEntries, outcomeEntry } from '../../src/delivery/destination-outcomes';
import { PendingCounts } from '../../src/messages/pending-counts';
import type { DecisionRecorder } from '../../src/messages/message-count-recorder';
import { deliveryQuery, outcomeClause, UnsafeFilterError } from '../../src/temporal/delivery-query';

const A = 'dst_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const B = 'dst_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';

describe("each destination's own outcome of a delivery", () => {
  it.each<[string, ReadonlyMap<string, 'delivered' | 'failed' | 'stopped'>, boolean, string[]]>([
    ['every destination retrying at the start', new Map(), false, [`retrying:${A}`, `retrying:${B}`]],
    ['a failure at B is B\'s alone: A keeps its own outcome', new Map([[A, 'delivered'], [B, 'failed']]), false, [`delivered:${A}`, `failed:${B}`]],
    ['B still retrying while A is delivered', new Map([[A, 'delivered']]), false, [`delivered:${A}`, `retrying:${B}`]],
    ['a stop at send time', new Map([[B, 'stopped']]), false, [`retrying:${A}`, `stopped:${B}`]],
    ['a replay\'s entries are apart from live ones', new Map([[A, 'delivered']]), true, [`replay:delivered:${A}`, `replay:retrying:${B}`]],
  ])('%s', (_, finished, replay, entries) => {
    expect(outcomeEntries([A, B], finished, replay)).toEqual(entries);
  });

  it.each<[Parameters<typeof outcomeClause>[1], string]>([
    ['retrying', `(SwitchyardOutcomes = "retrying:${A}" AND ExecutionStatus = "Running")`],
    ['delivered', `(SwitchyardOutcomes = "delivered:${A}" OR (SwitchyardOutcomes = "retrying:${A}" AND ExecutionStatus = "Completed" AND SwitchyardStatus != "stopped"))`],
    ['failed', `(SwitchyardOutcomes = "failed:${A}" OR (SwitchyardOutcomes = "retrying:${A}" AND ExecutionStatus IN ("Failed", "TimedOut")))`],
    [
      'stopped',
      `(SwitchyardOutcomes = "stopped:${A}" OR (SwitchyardOutcomes = "retrying:${A}" AND ExecutionStatus IN ("Terminated", "Canceled")) OR (SwitchyardOutcomes = "retrying:${A}" AND ExecutionStatus = "Completed" AND SwitchyardStatus = "stopped"))`,
    ],
  ])('counts a run %s at one destination by its own entry, or by how Temporal ended it while the entry said retrying', (outcome, clause) => {
    expect(outcomeClause(A, outcome, false)).toBe(clause);
  });

  it('asks a replay\'s entries for replayed outcomes', () => {
    expect(outcomeClause(A, 'failed', true)).toBe(`(SwitchyardOutcomes = "replay:failed:${A}" OR (SwitchyardOutcomes = "replay:retrying:${A}" AND ExecutionStatus IN ("Failed", "TimedOut")))`);
  });

  it('queries the outcome at the destination in place of the message-wide status', () => {
    expect(deliveryQuery({ destinationId: A, status: 'failed', outcome: { outcome: 'failed', replay: false }, since: '2026-01-01T00:00:00Z' }, undefined)).toBe(
      `WorkflowType = "deliverMessage" AND ${outcomeClause(A, 'failed', false)} AND StartTime >= "2026-01-01T00:00:00.000Z"`,
    );
    expect(outcomeEntry('failed', B, false)).toBe(`failed:${B}`);
  });

  it('refuses an outcome without a destination, and a destination id of another shape', () => {
    expect(() => deliveryQuery({ outcome: { outcome: 'failed', replay: false } }, undefined)).toThrow(UnsafeFilterError);
    expect(() => deliveryQuery({ destinationId: 'dst_x" OR "1" = "1', outcome: { outcome: 'failed', replay: false } }, undefined)).toThrow(UnsafeFilterError);
  });
});

describe("a request's overview counts wait for its starts", () => {
  function recorder() {
    const calls: unknown[] = [];
    const r: DecisionRecorder = { received: (...args) => void calls.push(['received', ...args]), filtered: (...args) => void calls.push(['filtered', ...args]) };
    return { r, calls };
  }

  it('records nothing until committed, then each count once', () => {
    const { r, calls } = recorder();
    const pending = new PendingCounts();
    pending.received('src_1', 60_000, 3);
    pending.filtered(A, 60_000, 'consent');
    expect(calls).toEqual([]);
    pending.commitTo(r);
    pending.commitTo(r);
    expect(calls).toEqual([
      ['received', 'src_1', 60_000, 3],
      ['filtered', A, 60_000, 'consent', undefined],
    ]);
  });

  it('drops the counts of a request that was never committed (answered 503, sent again)', () => {
    const { r, calls } = recorder();
    const retried = new PendingCounts();
    retried.received('src_1', 60_000, 3);
    const accepted = new PendingCounts();
    accepted.received('src_1', 61_000, 3);
    accepted.commitTo(r);
    expect(calls).toEqual([['received', 'src_1', 61_000, 3]]);
  });
});
