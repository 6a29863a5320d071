/**
 * Tests by cost (issue 11). `unit`: pure modules, no Temporal, no network, seconds in all
 * (`npm run test:unit`). `integration`: one real Temporal dev server and one real worker process
 * for the whole run, started in globalSetup, which only this project has, so a unit-only run never
 * builds or starts Temporal. `npm test` runs both, in band (Temporal's native runtime is per process).
 */
const shared = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': 'ts-jest' },
};

module.exports = {
  projects: [
    {
      ...shared,
      displayName: 'unit',
      testMatch: ['<rootDir>/test/unit/**/*.test.ts'],
    },
    {
      ...shared,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      globalSetup: '<rootDir>/test/helpers/global-setup.ts',
      globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
      setupFilesAfterEnv: ['<rootDir>/test/helpers/integration-timeout.ts'],
    },
  ],
};
