import { replayArchiveFrom, replayRange } from '../../src/delivery/replay-range';

/** A replay's range against what the archive still keeps, decided when it is asked for. */
const NOW = Date.parse('2026-11-28T12:00:00.000Z');
const DAY = 24 * 3_600_000;
const RETENTION = 7 * DAY;

describe('replayRange', () => {
  it.each([
    ['within the archive', '2026-11-27T00:00:00Z', '2026-11-28T00:00:00Z', { ok: true }],
    ['until in the future (messages still arriving)', '2026-11-28T11:00:00Z', '2026-11-29T00:00:00Z', { ok: true }],
    ['starting before the oldest archived moment', '2026-11-01T00:00:00Z', '2026-11-28T00:00:00Z', { ok: true, archiveFrom: '2026-11-21T12:00:00.000Z' }],
    ['until not after since', '2026-11-28T00:00:00Z', '2026-11-28T00:00:00Z', { ok: false, field: 'until', rule: 'must be later than since' }],
    ['starting in the future', '2026-11-29T00:00:00Z', '2026-11-30T00:00:00Z', { ok: false, field: 'since', rule: 'is in the future (now is 2026-11-28T12:00:00.000Z): nothing received in this range is archived yet' }],
    [
      'wholly before the archive',
      '2026-10-01T00:00:00Z',
      '2026-11-21T12:00:00.000Z',
      { ok: false, field: 'until', rule: 'is before the oldest message still archived (received at 2026-11-21T12:00:00.000Z; ARCHIVE_RETENTION is 7d): the whole range is past retention, nothing in it can be replayed' },
    ],
  ])('%s', (_name, since, until, expected) => {
    expect(replayRange(since, until, NOW, RETENTION)).toEqual(expected);
  });
});

describe('replayArchiveFrom', () => {
  it('is the oldest moment the replay could read when its range starts before it, and absent otherwise', () => {
    expect(replayArchiveFrom({ since: '2026-11-01T00:00:00.000Z', createdAt: '2026-11-28T12:00:00.000Z' }, RETENTION)).toBe('2026-11-21T12:00:00.000Z');
    expect(replayArchiveFrom({ since: '2026-11-25T00:00:00.000Z', createdAt: '2026-11-28T12:00:00.000Z' }, RETENTION)).toBeUndefined();
  });
});
