import { bundlerLineLevel, sdkLineLevel } from '../../src/temporal/quiet-start';

/** Quiet start: what the SDK says at every start that nobody acts on goes to DEBUG. */
describe('sdkLineLevel', () => {
  it.each([
    ['WARN', 'No workflows registered, not polling for workflow tasks', 'DEBUG'],
    ['INFO', 'No Nexus services registered, not polling for Nexus tasks', 'DEBUG'],
    ['WARN', 'Worker failed to poll', 'WARN'],
    ['INFO', 'Worker state changed', 'INFO'],
    ['ERROR', 'No workflows registered, but an error', 'ERROR'],
  ] as const)('%s %s → %s', (level, message, expected) => {
    expect(sdkLineLevel(level, message)).toBe(expected);
  });
});

describe('bundlerLineLevel', () => {
  const webpackStats = 'asset workflow-bundle-891ec4014a36261bf22b.js 1.81 MiB [emitted] [immutable] (name: main)\nwebpack 5.101.0 compiled successfully in 5316 ms';
  it.each([
    ['INFO', webpackStats, false, 'DEBUG'],
    ['INFO', webpackStats, true, 'INFO'],
    ['INFO', 'Workflow bundle created', false, 'INFO'],
    ['ERROR', webpackStats, false, 'ERROR'],
  ] as const)('%s (stdout a TTY: %s) → %s', (level, message, tty, expected) => {
    expect(bundlerLineLevel(level, message, tty)).toBe(expected);
  });
});
