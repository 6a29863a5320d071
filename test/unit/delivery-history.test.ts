import type { AttemptRequest, AttemptResult, DeliveryInput } from '../../src/delivery/types';
import { deliveryAttempts, type HistoryItem } from '../../src/temporal/delivery-history';

const input: DeliveryInput = {
  sourceId: 'src_1',
  messageId: 'm1',
  type: 'track',
  destinationIds: ['dst_a', 'dst_b'],
  message: { type: 'track', event: 'E' },
  policy: { retryWindowMs: 60_000, timeoutMs: 5_000, initialBackoffMs: 100, maxBackoffMs: 1_000, firstAttemptLocal: true },
  webhookLabels: { dst_a: ['https://a.example/1', 'https://a.example/2'], dst_b: ['https://b.example/in'] },
};

const T = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
const request = (destinationId: string, webhookIndex: number, round: number): AttemptRequest => ({ destinationId, webhookIndex, round, messageId: 'm1', message: input.message, timeoutMs: 5_000 });
const sent = (outcome: AttemptResult['outcome'], durationMs = 100): AttemptResult => ({ destinationEnabled: true, webhookCount: 2, outcome, durationMs });

/** A regular activity: scheduled, started at `s`, completed one second later. */
const activity = (eventId: number, req: AttemptRequest, s: number, result: AttemptResult): HistoryItem[] => [
  { kind: 'scheduled', eventId: String(eventId), request: req },
  { kind: 'activity-started', scheduledEventId: String(eventId), at: T(s) },
  { kind: 'activity-completed', scheduledEventId: String(eventId), at: T(s + 1), result },
];

describe('attempts from a delivery history', () => {
  it('a local first attempt per destination, by sequence number, in destinationIds order', () => {
    const destinations = deliveryAttempts(input, [
      { kind: 'local', seq: 2, at: T(2), result: sent({ kind: 'success', status: 204 }, 1_000) },
      { kind: 'local', seq: 1, at: T(3), result: sent({ kind: 'success', status: 200 }, 500) },
      { kind: 'closed', report: { messageId: 'm1', destinations: [{ destinationId: 'dst_a', status: 'delivered', webhookIndex: 0, rounds: 1 }, { destinationId: 'dst_b', status: 'delivered', webhookIndex: 0, rounds: 1 }] } },
    ]);
    expect(destinations).toEqual([
      { destinationId: 'dst_a', status: 'delivered', attempts: [{ webhookIndex: 0, url: 'https://a.example/1', round: 1, startedAt: '2026-01-01T00:00:02.500Z', durationMs: 500, httpStatus: 200, outcome: 'success' }] },
      { destinationId: 'dst_b', status: 'delivered', attempts: [{ webhookIndex: 0, url: 'https://b.example/in', round: 1, startedAt: T(1), durationMs: 1_000, httpStatus: 204, outcome: 'success' }] },
    ]);
  });

  it('a deferred local attempt sent nothing: only the activity that followed counts; failover and a retry round in order', () => {
    const [a] = deliveryAttempts({ ...input, destinationIds: ['dst_a'] }, [
      { kind: 'local', seq: 1, at: T(0), result: { destinationEnabled: true, webhookCount: 2, deferred: true } },
      ...activity(5, request('dst_a', 0, 1), 1, sent({ kind: 'retry', status: 503, reason: 'HTTP 503' })),
      ...activity(9, request('dst_a', 1, 1), 3, sent({ kind: 'permanent', status: 404, reason: 'HTTP 404' })),
      ...activity(14, request('dst_a', 0, 2), 6, sent({ kind: 'success', status: 200 })),
      { kind: 'closed', report: { messageId: 'm1', destinations: [{ destinationId: 'dst_a', status: 'delivered', webhookIndex: 0, rounds: 2 }] } },
    ]);
    expect(a.attempts.map(({ webhookIndex, url, round, httpStatus, error, outcome, startedAt }) => ({ webhookIndex, url, round, httpStatus, error, outcome, startedAt }))).toEqual([
      { webhookIndex: 0, url: 'https://a.example/1', round: 1, httpStatus: 503, error: 'HTTP 503', outcome: 'retry', startedAt: T(1) },
      { webhookIndex: 1, url: 'https://a.example/2', round: 1, httpStatus: 404, error: 'HTTP 404', outcome: 'permanent', startedAt: T(3) },
      { webhookIndex: 0, url: 'https://a.example/1', round: 2, httpStatus: 200, error: undefined, outcome: 'success', startedAt: T(6) },
    ]);
    expect(a.status).toBe('delivered');
  });

  it('an error without a status, a lost attempt, busy answers and a switched-off destination', () => {
    const [a] = deliveryAttempts({ ...input, destinationIds: ['dst_a'] }, [
      ...activity(5, request('dst_a', 0, 1), 1, sent({ kind: 'retry', reason: 'timeout: no response within 5000ms' }, 5_000)),
      { kind: 'scheduled', eventId: '8', request: request('dst_a', 1, 1) },
      { kind: 'activity-failed', scheduledEventId: '8', at: T(20), message: 'activity StartToClose timeout' },
      ...activity(12, request('dst_a', 0, 2), 30, { destinationEnabled: true, webhookCount: 2, busy: true, outcome: { kind: 'retry', reason: 'webhook busy' } }),
      ...activity(15, request('dst_a', 0, 2), 40, { destinationEnabled: false, webhookCount: 0 }),
      { kind: 'closed', report: { messageId: 'm1', destinations: [{ destinationId: 'dst_a', status: 'stopped', rounds: 2, reason: 'destination switched off or deleted' }] } },
    ]);
    expect(a).toEqual({
      destinationId: 'dst_a',
      status: 'stopped',
      reason: 'destination switched off or deleted',
      attempts: [
        { webhookIndex: 0, url: 'https://a.example/1', round: 1, startedAt: T(1), durationMs: 5_000, error: 'timeout: no response within 5000ms', outcome: 'retry' },
        { webhookIndex: 1, url: 'https://a.example/2', round: 1, error: 'attempt lost: activity StartToClose timeout', outcome: 'retry' },
      ],
    });
  });

  it('a delivery still under way has no final status; an input without labels shows no URL', () => {
    const { webhookLabels: _labels, ...unlabelled } = input;
    const destinations = deliveryAttempts({ ...unlabelled, destinationIds: ['dst_a'] }, activity(5, request('dst_a', 0, 1), 1, sent({ kind: 'retry', status: 500, reason: 'HTTP 500' })));
    expect(destinations).toEqual([{ destinationId: 'dst_a', attempts: [{ webhookIndex: 0, round: 1, startedAt: T(1), durationMs: 100, httpStatus: 500, error: 'HTTP 500', outcome: 'retry' }] }]);
  });
});

describe('attempts of an actions destination', () => {
  it("names each attempt's mapping; local first attempts go one per mapping, after the destinations before it", () => {
    const actions: DeliveryInput = { ...input, destinationIds: ['dst_a', 'dst_act'], mappings: { dst_act: ['Orders', 'Users'] } };
    const mapped = (mapping: string, round: number): AttemptRequest => ({ ...request('dst_act', 0, round), mapping });
    const destinations = deliveryAttempts(actions, [
      { kind: 'local', seq: 3, at: T(2), result: sent({ kind: 'retry', status: 503, reason: 'HTTP 503' }, 1_000) },
      { kind: 'local', seq: 2, at: T(2), result: sent({ kind: 'success', status: 200 }, 1_000) },
      { kind: 'local', seq: 1, at: T(2), result: sent({ kind: 'success', status: 200 }, 1_000) },
      ...activity(10, mapped('Users', 2), 5, sent({ kind: 'success', status: 201 })),
    ]);
    expect(destinations[0].attempts).toEqual([expect.objectContaining({ webhookIndex: 0, url: 'https://a.example/1' })]);
    expect(destinations[1].attempts).toEqual([
      { mapping: 'Users', webhookIndex: 0, round: 1, startedAt: T(1), durationMs: 1_000, httpStatus: 503, error: 'HTTP 503', outcome: 'retry' },
      { mapping: 'Orders', webhookIndex: 0, round: 1, startedAt: T(1), durationMs: 1_000, httpStatus: 200, outcome: 'success' },
      { mapping: 'Users', webhookIndex: 0, round: 2, startedAt: T(5), durationMs: 100, httpStatus: 201, outcome: 'success' },
    ]);
  });
});
