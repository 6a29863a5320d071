/**
 * Tests by cost. `unit`: pure modules, no Temporal, no network, seconds in all
 * (`npm run test:unit`). `integration`: one real Temporal dev server and PostgreSQL for the whole
 * run, and one real worker process per Jest worker (a slot: test/helpers/slots.ts), started in
 * globalSetup, which only this project has, so a unit-only run never builds or starts Temporal.
 *
 * Files run side by side on JEST_WORKERS workers (default 3, which fills 2 cores as files
 * mostly wait on I/O; `JEST_WORKERS=1` runs in band: docs/testing.md); each slot has its
 * own store, data dir, task queue and worker, so files in different slots cannot see each other's data. The slowest files
 * start first (test/jest/sequencer.js), and every run writes its timings (`npm run test:timings`).
 */
const shared = {
  // Jest's file map crawls only the tests: the repository's .test-data (tens of thousands of files
  // after a few runs), node_modules and the rest are never listed. Modules are still resolved from disk.
  roots: ['<rootDir>/test'],
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': '<rootDir>/test/jest/esbuild-transform.js' },
};

module.exports = {
  maxWorkers: Number(process.env.JEST_WORKERS ?? 3),
  testSequencer: '<rootDir>/test/jest/sequencer.js',
  reporters: ['default', '<rootDir>/test/jest/timings-reporter.js'],
  projects: [
    {
      ...shared,
      displayName: 'unit',
      testMatch: ['<rootDir>/test/unit/**/*.test.ts'],
    },
    {
      ...shared,
      displayName: 'integration',
      // Prints the tail of the run's logs when a file fails.
      testEnvironment: '<rootDir>/test/jest/integration-environment.js',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      globalSetup: '<rootDir>/test/helpers/global-setup.ts',
      globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
      setupFiles: ['<rootDir>/test/helpers/slot-env.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/helpers/integration-timeout.ts'],
    },
  ],
};
