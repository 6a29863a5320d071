import { consentTime, correctTimestamp, isIsoDateTime } from '../../src/delivery/timestamps';

const received = Date.parse('2026-05-01T12:00:00.000Z');

describe('correctTimestamp', () => {
  it('uses receivedAt when the call has no timestamp', () => {
    expect(correctTimestamp(received)).toBe('2026-05-01T12:00:00.000Z');
  });

  it('subtracts the client-side delay (sentAt - timestamp) from receivedAt, cancelling the client clock skew', () => {
    // Client clock is 2 hours behind; the event happened 3 s before the batch was sent.
    expect(correctTimestamp(received, '2026-05-01T09:59:57.000Z', '2026-05-01T10:00:00.000Z')).toBe('2026-05-01T11:59:57.000Z');
  });

  it('keeps an explicit timestamp without sentAt (historical import), normalized to UTC with milliseconds', () => {
    expect(correctTimestamp(received, '2020-02-03T04:05:06+02:00')).toBe('2020-02-03T02:05:06.000Z');
  });
});

describe('isIsoDateTime', () => {
  it.each([
    ['2026-01-01T00:00:00Z', true], ['2026-01-01T00:00:00.123Z', true], ['2026-01-01T00:00:00+01:00', true], ['2026-01-01T00:00Z', true],
    ['2026-01-01', false], ['yesterday', false], ['2026-13-01T00:00:00Z', false], ['2026-01-01T00:00:00', false], ['', false],
  ])('%s → %s', (value, valid) => {
    expect(isIsoDateTime(value)).toBe(valid);
  });
});

describe('consentTime', () => {
  it.each([
    ['a past timestamp: the timestamp (a late-arriving older event does not undo a newer choice)', '2026-05-01T11:00:00.000Z', '2026-05-01T11:00:00.000Z'],
    ['the receipt itself: the same', '2026-05-01T12:00:00.000Z', '2026-05-01T12:00:00.000Z'],
    ['a future timestamp (a wrong clock, or a forged call): its receipt, never later', '2099-01-01T00:00:00.000Z', '2026-05-01T12:00:00.000Z'],
    ['a millisecond ahead: its receipt', '2026-05-01T12:00:00.001Z', '2026-05-01T12:00:00.000Z'],
    ['an unreadable timestamp: its receipt', 'not a time', '2026-05-01T12:00:00.000Z'],
  ])('orders consent preferences with %s', (_, timestamp, expected) => {
    expect(consentTime(timestamp, '2026-05-01T12:00:00.000Z')).toBe(expected);
  });
});
