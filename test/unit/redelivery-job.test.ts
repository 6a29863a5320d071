import { decideRow } from '../../src/delivery/redelivery-job';
import { redeliverySnapshotQuery } from '../../src/temporal/delivery-query';

const JOB = 'rdl_0123456789abcdef0123456789abcdef';
const OTHER_JOB = 'rdl_ffffffffffffffffffffffffffffffff';

describe('which matched run a bulk redelivery job sends again', () => {
  it.each([
    ['the matched run is still the latest: redeliver', 'run-1', { runId: 'run-1' }, 'redeliver'],
    ['the latest run is this job redelivering the matched run (a page retried after a crash): counted, not started again', 'run-1', { runId: 'run-2', redeliveryJob: JOB, previousRunId: 'run-1' }, 'started_by_this_job'],
    ['the latest run is this job redelivering a later run of the same message: skip, one message once', 'run-1', { runId: 'run-3', redeliveryJob: JOB, previousRunId: 'run-2' }, 'skip'],
    ['another job already redelivered it: skip', 'run-1', { runId: 'run-2', redeliveryJob: OTHER_JOB, previousRunId: 'run-1' }, 'skip'],
    ['an operator redelivered it one by one: skip', 'run-1', { runId: 'run-2', previousRunId: 'run-1' }, 'skip'],
    ['the sender re-sent it (a newer run without a memo): skip', 'run-1', { runId: 'run-2' }, 'skip'],
  ] as const)('%s', (_name, matched, latest, expected) => {
    expect(decideRow(matched, latest, JOB)).toBe(expected);
  });
});

describe("a bulk redelivery job's snapshot query", () => {
  const SRC = 'src_0123456789abcdef0123456789abcdef';
  const DST = 'dst_0123456789abcdef0123456789abcdef';

  it('matches only runs that had closed when the job was made, so the redeliveries it starts never join the set it pages', () => {
    expect(redeliverySnapshotQuery({ sourceId: SRC, createdAt: '2026-01-03T00:00:00Z', filter: { status: 'failed', since: '2026-01-01T00:00:00Z', until: '2026-01-02T00:00:00Z', destinationId: DST } })).toBe(
      `WorkflowType = "deliverMessage" AND SwitchyardSource = "${SRC}" AND SwitchyardDestinations = "${DST}" AND (SwitchyardStatus = "failed" OR ExecutionStatus = "TimedOut")` +
        ` AND StartTime >= "2026-01-01T00:00:00.000Z" AND StartTime < "2026-01-02T00:00:00.000Z" AND ExecutionStatus != "Running" AND CloseTime <= "2026-01-03T00:00:00.000Z"`,
    );
  });

  it('refuses a source id of another shape rather than quoting it', () => {
    expect(() => redeliverySnapshotQuery({ sourceId: 'src" OR 1=1', createdAt: '2026-01-03T00:00:00Z', filter: { status: 'stopped', since: '2026-01-01T00:00:00Z', until: '2026-01-02T00:00:00Z' } })).toThrow();
  });
});
