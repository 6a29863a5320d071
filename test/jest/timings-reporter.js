// @ts-check
/**
 * Every run writes each test file's wall time (Jest's own, from the file's start to its
 * end) to .test-data/timings.json; `npm run test:timings` prints the slowest of the last run.
 */
const { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '../..');
const OUT = path.join(ROOT, '.test-data', 'timings.json');
/** Where test/jest/integration-environment.js leaves each integration file's CPU seconds. */
const CPU_DIR = path.join(ROOT, '.test-data', 'cpu');

/** @returns {Record<string, Record<string, number>>} file → CPU seconds by process */
function readCpu() {
  if (!existsSync(CPU_DIR)) return {};
  return Object.fromEntries(readdirSync(CPU_DIR).map((name) => {
    const { file, cpu } = JSON.parse(readFileSync(path.join(CPU_DIR, name), 'utf8'));
    return [file, cpu];
  }));
}

class TimingsReporter {
  onRunStart() {
    rmSync(CPU_DIR, { recursive: true, force: true });
  }

  /** @param {import('@jest/test-result').AggregatedResult} results */
  onRunComplete(_contexts, results) {
    const cpu = readCpu();
    const files = Object.fromEntries(
      results.testResults
        .map((file) => [path.relative(ROOT, file.testFilePath).split(path.sep).join('/'), {
          ms: file.perfStats.end - file.perfStats.start,
          tests: file.numPassingTests + file.numFailingTests + file.numPendingTests,
          failed: file.numFailingTests > 0 || file.testExecError !== undefined,
          cpu: cpu[path.relative(ROOT, file.testFilePath).split(path.sep).join('/')],
          // Where a slow file's time goes: its slowest tests (the rest is its beforeAll/afterAll and module loading).
          slowest: file.testResults
            .filter((test) => (test.duration ?? 0) >= 1_000)
            .sort((a, b) => (b.duration ?? 0) - (a.duration ?? 0))
            .slice(0, 3)
            .map((test) => ({ ms: test.duration, test: test.fullName.slice(0, 160) })),
        }])
        .sort(([, a], [, b]) => b.ms - a.ms),
    );
    mkdirSync(path.dirname(OUT), { recursive: true });
    let run = { startedAt: new Date(results.startTime).toISOString(), wallMs: Date.now() - results.startTime, suites: results.numTotalTestSuites, tests: results.numTotalTests, files };
    // scripts/test.sh's second Jest run (the files that run alone) adds to the first's record.
    if (process.env.SWITCHYARD_TIMINGS_APPEND === '1' && existsSync(OUT)) {
      const first = JSON.parse(readFileSync(OUT, 'utf8'));
      run = { startedAt: first.startedAt, wallMs: first.wallMs + run.wallMs, suites: first.suites + run.suites, tests: first.tests + run.tests, files: { ...first.files, ...files } };
    }
    writeFileSync(OUT, `${JSON.stringify(run, null, 1)}\n`);
  }
}

module.exports = TimingsReporter;
module.exports.CPU_DIR = CPU_DIR;
