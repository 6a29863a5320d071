import { systemStatus } from '../../src/api/system-status';

describe('systemStatus: what /admin/status calls the system', () => {
  it.each([
    [{ store: true, temporal: true, problems: [] }, 'ok'],
    [{ store: true, temporal: true, problems: ['task queue switchyard: no worker polled it within 70 s (HEALTH_POLLER_WINDOW); start a worker on it'] }, 'degraded'],
    [{ store: true, temporal: true, problems: ['search attributes: Temporal namespace default lacks …'] }, 'degraded'],
    [{ store: false, temporal: true, problems: ['store: no answer within 2 s (DATABASE_URL or DATABASE_PATH)'] }, 'unavailable'],
    [{ store: true, temporal: false, problems: ['temporal: no answer within 3 s (…)'] }, 'unavailable'],
    [{ store: false, temporal: false, problems: ['store: …', 'temporal: …'] }, 'unavailable'],
  ])('%j is %s', (reading, status) => {
    expect(systemStatus(reading)).toBe(status);
  });
});
