import { randomBytes } from 'node:crypto';
import { addCounts, isReplayOpen, NO_COUNTS, replayDeliveryWorkflowId, replayWorkflowId, type ReplayCounts, type ReplayStatus } from '../../src/delivery/replay';
import { ARCHIVED_CALL, openBody, sealBody, SealedBodyError } from '../../src/privacy/sealed-body';
import { sweepIntervalMs } from '../../src/api/archive-retention';
import { archiveDay, dayOfPartition, partitionName } from '../../src/store/message-archive-table';

describe('archive day partitions', () => {
  it.each([
    ['1970-01-01T00:00:00.000Z', 0, 'message_archive_1970_01_01'],
    ['2026-11-28T00:00:00.000Z', 20_785, 'message_archive_2026_11_28'],
    ['2026-11-28T23:59:59.999Z', 20_785, 'message_archive_2026_11_28'],
    ['2026-11-29T00:00:00.000Z', 20_786, 'message_archive_2026_11_29'],
  ])('%s falls in UTC day %i, partition %s', (iso, day, name) => {
    expect(archiveDay(Date.parse(iso))).toBe(day);
    expect(partitionName(day)).toBe(name);
    expect(dayOfPartition(name)).toBe(day);
  });

  it.each(['message_archive', 'message_archive_page', 'message_archive_2026_1_28', 'other_2026_11_28'])('%s is no day partition', (name) => {
    expect(dayOfPartition(name)).toBeUndefined();
  });
});

describe('retention sweep interval', () => {
  it.each([
    [2_000, 1_000],
    [60_000, 15_000],
    [604_800_000, 3_600_000],
  ])('ARCHIVE_RETENTION %i ms is swept every %i ms', (retention, every) => {
    expect(sweepIntervalMs(retention)).toBe(every);
  });
});

describe('replay counts and states', () => {
  it('adds a page to the running counts, skipped reasons each on their own', () => {
    const after = addCounts(addCounts(NO_COUNTS, { matched: 50, started: 40, skipped: { erased: 5, filtered: 5 } }), { delivered: 39, failed: 1, skipped: { suppressed: 2 } });
    expect(after).toEqual({ matched: 50, started: 40, delivered: 39, failed: 1, skipped: { erased: 5, suppressed: 2, filtered: 5, blocked: 0, duplicate: 0 } });
    expect(NO_COUNTS).toEqual({ matched: 0, started: 0, delivered: 0, failed: 0, skipped: { erased: 0, suppressed: 0, filtered: 0, blocked: 0, duplicate: 0 } });
  });

  it('reads counts carried over from a run before blocked-only replays (no blocked, no duplicate) as 0 of each', () => {
    const before = { matched: 3, started: 2, delivered: 1, failed: 0, skipped: { erased: 1, suppressed: 0, filtered: 0 } } as unknown as ReplayCounts;
    expect(addCounts(NO_COUNTS, before)).toEqual({ matched: 3, started: 2, delivered: 1, failed: 0, skipped: { erased: 1, suppressed: 0, filtered: 0, blocked: 0, duplicate: 0 } });
    expect(addCounts(before, { skipped: { blocked: 2, duplicate: 1 } }).skipped).toEqual({ erased: 1, suppressed: 0, filtered: 0, blocked: 2, duplicate: 1 });
  });

  it.each<[ReplayStatus, boolean]>([
    ['running', true],
    ['paused', true],
    ['completed', false],
    ['cancelled', false],
    ['failed', false],
  ])('a %s replay may change: %s', (status, open) => {
    expect(isReplayOpen(status)).toBe(open);
  });

  it("gives each replayed delivery a workflow id of its own, apart from the message's original", () => {
    expect(replayWorkflowId('rpl_1')).toBe('replay:rpl_1');
    expect(replayDeliveryWorkflowId('rpl_1', 'm-1')).toBe('replay:rpl_1:m-1');
  });
});

describe('an archived call sealed under its user key', () => {
  it('opens as an archived call, never in place of a delivery body', () => {
    const key = randomBytes(32);
    const call = { type: 'track' as const, message: { type: 'track' as const, messageId: 'm-1' }, integrations: { All: false } };
    const sealed = sealBody(key, 'h1_subject', 'm-1', call, ARCHIVED_CALL);
    expect(openBody(key, 'm-1', sealed, ARCHIVED_CALL)).toEqual(call);
    expect(() => openBody(key, 'm-1', sealed)).toThrow(SealedBodyError);
  });
});
