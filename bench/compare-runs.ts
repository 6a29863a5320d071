/**
 * Compares a bench run with the last recorded one of the same shape and says which system moved:
 *   npm run bench:compare                      the newest results file in bench/results against the one before it
 *   npm run bench:compare -- <after.json>      that run against the last earlier run of its shape
 *   npm run bench:compare -- <after.json> <before.json>
 * A script to run by hand after `npm run bench`, never a timed test (docs/performance.md).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { compareRuns, comparisonText, previousRun, type RecordedRun } from './compare';

const RESULTS = path.join(__dirname, 'results');

function read(file: string): RecordedRun {
  return JSON.parse(readFileSync(file, 'utf8')) as RecordedRun;
}

/** Every recorded run (the top of bench/results; its folders hold experiments of other shapes). */
function recorded(): RecordedRun[] {
  return readdirSync(RESULTS)
    .filter((f) => f.endsWith('.json'))
    .map((f) => read(path.join(RESULTS, f)))
    .filter((run) => Array.isArray(run.results) && run.options !== undefined);
}

function main(args: string[]): void {
  const runs = recorded();
  const after = args[0] ? read(args[0]) : [...runs].sort((a, b) => (a.startedAt < b.startedAt ? 1 : -1))[0];
  if (!after) throw new Error('no results in bench/results: run `npm run bench` first');
  const before = args[1] ? read(args[1]) : previousRun(after, runs);
  if (!before) throw new Error(`no earlier run of the same shape as ${after.label} in bench/results: name one as the second argument`);
  console.log(comparisonText(before, after, compareRuns(before, after)));
}

main(process.argv.slice(2));
