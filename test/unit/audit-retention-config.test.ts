import { loadConfig } from '../../src/config';

/** AUDIT_RETENTION: 0 keeps every row; otherwise at least the 90 days the database itself keeps. */
it.each([
  ['0', 0],
  ['90d', 90 * 86_400_000],
  ['400d', 400 * 86_400_000],
])('accepts AUDIT_RETENTION=%s', (raw, ms) => expect(loadConfig({ AUDIT_RETENTION: raw }).auditRetention).toBe(ms));

it('refuses an AUDIT_RETENTION shorter than the 90 days the audit log keeps, naming the setting and the floor', () => {
  expect(() => loadConfig({ AUDIT_RETENTION: '30d' })).toThrow(/AUDIT_RETENTION.*90d/s);
});
