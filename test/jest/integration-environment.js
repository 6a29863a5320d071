// @ts-check
/**
 * A failing integration file prints what it takes to diagnose it without a rerun: the
 * tail of every log the products of the run wrote while the file ran (its slot's worker, and the
 * processes the file started itself, which log under the slot's dir). Property tests print their
 * seed themselves (FC_SEED).
 */
const { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } = require('node:fs');
const path = require('node:path');
const { TestEnvironment } = require('jest-environment-node');
const { cpuSeconds, runRoots } = require('./cpu');
const { CPU_DIR } = require('./timings-reporter');

const TAIL_LINES = 40;
const MAX_LINE = 400;
const MAX_LOGS = 6;
const FAILURES_DIR = path.resolve(__dirname, '../../.test-data/failures');

/** @param {string} dir @returns {string[]} */
function logsUnder(dir) {
  try {
    return readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .filter((name) => name.endsWith('.log'))
      .map((name) => path.join(dir, name));
  } catch {
    return [];
  }
}

/** @param {string} file */
function tail(file) {
  const lines = readFileSync(file, 'utf8').trimEnd().split('\n').slice(-TAIL_LINES);
  return lines.map((line) => (line.length > MAX_LINE ? `${line.slice(0, MAX_LINE)} …` : line)).join('\n');
}

class IntegrationEnvironment extends TestEnvironment {
  /**
   * @param {import('@jest/environment').JestEnvironmentConfig} config
   * @param {import('@jest/environment').EnvironmentContext} context
   */
  constructor(config, context) {
    super(config, context);
    this.testPath = context.testPath;
    this.startedAt = Date.now();
    /** @type {string[]} */
    this.failures = [];
    this.slot = process.env.JEST_WORKER_ID ?? '1';
    this.cpuAtStart = cpuSeconds(process.pid, runRoots(this.slot));
  }

  /** @param {import('@jest/types').Circus.Event} event */
  async handleTestEvent(event) {
    if (event.name === 'test_done' && event.test.errors.length > 0) this.failures.push(event.test.name);
    if (event.name === 'hook_failure') this.failures.push(`${event.hook.type} hook`);
  }

  async teardown() {
    if (this.failures.length > 0) this.printLogTails();
    await super.teardown();
    this.recordCpu();
  }

  /**
   * The file's CPU seconds for the timings reporter: `self` is this Jest worker with what it started
   * (APIs, workers, browsers, builds); `worker` the slot's worker; `temporal` and `postgres` the
   * run's shared servers while the file ran (beside other files, theirs too).
   */
  recordCpu() {
    const now = cpuSeconds(process.pid, runRoots(this.slot));
    const cpu = Object.fromEntries(['self', 'worker', 'temporal', 'postgres'].map((name) => [name, Math.round(((now[name] ?? 0) - (this.cpuAtStart[name] ?? 0)) * 100) / 100]));
    const file = path.relative(path.resolve(__dirname, '../..'), this.testPath).split(path.sep).join('/');
    mkdirSync(CPU_DIR, { recursive: true });
    writeFileSync(path.join(CPU_DIR, `${file.replace(/[^\w.-]/g, '_')}.json`), JSON.stringify({ file, cpu }));
  }

  printLogTails() {
    const slots = JSON.parse(process.env.SWITCHYARD_TEST_SLOTS ?? '{}');
    const slot = slots[process.env.JEST_WORKER_ID ?? '1'];
    if (slot === undefined) return;
    const logs = logsUnder(slot.SWITCHYARD_TEST_DIR)
      .map((file) => ({ file, modified: statSync(file).mtimeMs }))
      .filter(({ modified }) => modified >= this.startedAt)
      .sort((a, b) => b.modified - a.modified)
      .slice(0, MAX_LOGS);
    const parts = logs.map(({ file }) => `--- ${path.relative(process.cwd(), file)} (last ${TAIL_LINES} lines) ---\n${tail(file)}`);
    const temporalWarnings = this.temporalWarnings(path.join(path.dirname(slot.SWITCHYARD_TEST_DIR), 'temporal.log'));
    if (temporalWarnings) parts.push(`--- the run's Temporal dev server: warnings and errors while the file ran (last ${TAIL_LINES}) ---\n${temporalWarnings}`);
    const text = `\n=== ${path.relative(process.cwd(), this.testPath)} failed (${this.failures.join('; ')}): logs written while it ran, slot ${process.env.JEST_WORKER_ID ?? '1'} ===\n${parts.join('\n') || '(no log written)'}\n=== end of logs ===\n`;
    process.stderr.write(text);
    // Kept for scripts/test.sh, which prints every failed file's logs again after the run's summary:
    // with three files side by side their lines interleave, and a long CI log may be cut at the top.
    mkdirSync(FAILURES_DIR, { recursive: true });
    writeFileSync(path.join(FAILURES_DIR, `${path.basename(this.testPath)}.log`), text);
  }

  /**
   * The Temporal server's warning and error lines since the file started (the dev server logs one
   * JSON or logfmt line per event, each with its time): a workflow task timed out, a completion
   * refused, a persistence error.
   * @param {string} file
   */
  temporalWarnings(file) {
    let lines;
    try {
      lines = readFileSync(file, 'utf8').split('\n');
    } catch {
      return '';
    }
    const since = this.startedAt;
    const wanted = lines.filter((line) => /level["=:\s]*"?(warn|error)/i.test(line)).filter((line) => {
      const at = /"?time"?[=:]\s*"?([0-9T:.+-]+Z?)/.exec(line);
      return !at || !(Date.parse(at[1]) < since);
    });
    return wanted.slice(-TAIL_LINES).map((line) => (line.length > MAX_LINE ? `${line.slice(0, MAX_LINE)} …` : line)).join('\n');
  }
}

module.exports = IntegrationEnvironment;
