// @ts-check
/**
 * The slowest files first, so no Jest worker is left with a long file at the end of the
 * run while the others idle. Durations come from this machine's last run when Jest has them (its
 * cache), else from test/durations.json (`npm run test:timings -- --save` writes it from a run),
 * else from the file's size, as Jest's own sequencer does.
 */
const { readFileSync } = require('node:fs');
const path = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

const ROOT = path.resolve(__dirname, '../..');

function committedDurations() {
  try {
    return /** @type {Record<string, number>} */ (JSON.parse(readFileSync(path.join(ROOT, 'test/durations.json'), 'utf8')));
  } catch {
    return {};
  }
}

class SlowestFirst extends Sequencer {
  /** @param {import('@jest/test-result').Test[]} tests */
  sort(tests) {
    const committed = committedDurations();
    /** @param {import('@jest/test-result').Test} test */
    const duration = (test) => {
      const cached = this._getCache(test)[test.path];
      if (cached !== undefined && cached[1] > 0) return cached[1];
      const known = committed[path.relative(ROOT, test.path).split(path.sep).join('/')];
      return known ?? 0;
    };
    const failed = (/** @type {import('@jest/test-result').Test} */ test) => this._getCache(test)[test.path]?.[0] === 0;
    return [...tests].sort((a, b) => Number(failed(b)) - Number(failed(a)) || duration(b) - duration(a) || a.path.localeCompare(b.path));
  }
}

module.exports = SlowestFirst;
