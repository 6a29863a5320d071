import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * The code and the docs speak for themselves: someone who picks Switchyard up has the repository,
 * not the issue tracker it was planned in (nor the review notes beside it), so no file cites them ("issue 42", "(issue 42 item 8)",
 * "issue #12", "#51"). Each rule is said in words, or linked to the docs section that states it;
 * history is in CHANGELOG.md and git. OpenAPI descriptions are strings in src/, so this covers what
 * /openapi.json and /docs serve too.
 */
const ROOT = path.resolve(__dirname, '../..');
/** Where the code, tests, benches, scripts, docs and deployment files are. */
const SCANNED = ['src', 'test', 'bench', 'scripts', 'docs', 'deploy', '.ci'];
const SKIPPED_DIRECTORIES = new Set(['node_modules', 'dist']);
/** Binary files, read by no one as text. */
const BINARY = /\.(png|jpe?g|gif|ico|pprof|woff2?|gz|zip)$/i;
/**
 * The bench's recorded runs (bench/results/*.json and *.svg) are the output of past runs, kept as
 * they were measured; the code that wrote them is scanned. Its notes (bench/results/notes/) are prose and are scanned.
 */
const RECORDED = /^bench\/results\/[^/]+\.(json|svg)$/;

/** "issue 42", "Issues 33 and 44", "issue #12", "issue42", "ISSUE_33": this project's tracker. */
const ISSUE = /\bissues?(?:\s+#?|\s*#|_?)\d+/i;
/**
 * A bare "#51", or "(#51)". A reference into another project's repository names it
 * (`brianc/node-postgres#3202`), and is allowed; so are colours (`'#111'`) and a "#1" in code.
 */
const BARE_NUMBER = /(?:^|[\s([,])#\d+\b/;
/** "(review finding 3)", "Finding 6:": a numbered finding of a review kept outside the repository. */
const FINDING = /\b(?:review )?findings? \d+/i;

/** The tracker references on one line of prose or code, as found. */
function trackerReferences(line: string): string[] {
  const found: string[] = [];
  const issue = ISSUE.exec(line);
  if (issue) found.push(issue[0].trim());
  const bare = BARE_NUMBER.exec(line);
  if (bare) found.push(bare[0].trim());
  const finding = FINDING.exec(line);
  if (finding) found.push(finding[0]);
  return found;
}

function filesUnder(relative: string): string[] {
  const absolute = path.join(ROOT, relative);
  const stat = statSync(absolute, { throwIfNoEntry: false });
  if (!stat) return [];
  if (stat.isFile()) return [relative];
  return readdirSync(absolute, { withFileTypes: true }).flatMap((entry) => {
    if (entry.isDirectory() && SKIPPED_DIRECTORIES.has(entry.name)) return [];
    if (!entry.isDirectory() && !entry.isFile()) return [];
    return filesUnder(path.posix.join(relative, entry.name));
  });
}

/** Every reference in a file, as `path:line: reference`; a Markdown file's fenced blocks are quoted output, not prose. */
function referencesIn(file: string, text: string): string[] {
  const found: string[] = [];
  let fenced = false;
  text.split('\n').forEach((line, index) => {
    if (file.endsWith('.md') && /^\s*```/.test(line)) fenced = !fenced;
    if (fenced) return;
    for (const reference of trackerReferences(line)) found.push(`${file}:${index + 1}: ${reference}`);
  });
  return found;
}

/** The scanned files, this one left out: it spells what it looks for. */
function scannedFiles(): string[] {
  const self = path.relative(ROOT, __filename).split(path.sep).join('/');
  const rootFiles = readdirSync(ROOT, { withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name !== 'CHANGELOG.md' && entry.name !== 'package-lock.json')
    .map((entry) => entry.name);
  return [...rootFiles, ...SCANNED.flatMap(filesUnder)].filter((file) => file !== self && !BINARY.test(file) && !RECORDED.test(file));
}

describe('no file cites the issue tracker', () => {
  it.each([
    ['a rule (issue 41).', ['issue 41']],
    ['Issue 42 item 8: the decision', ['Issue 42']],
    ['issues 33 and 44', ['issues 33']],
    ['see issue #12', ['issue #12', '#12']],
    ['const ISSUE_33_COLUMNS = []', ['ISSUE_33']],
    ['function issue33Columns()', ['issue33']],
    ['fixed in (#51)', ['(#51']],
    ['#7 on a line of its own', ['#7']],
    ['no audit row (review finding 3).', ['review finding 3']],
    ['// Finding 6: each destination', ['Finding 6']],
  ])('finds the reference in %j', (line, expected) => {
    expect(trackerReferences(line)).toEqual(expected);
  });

  it.each(['brianc/node-postgres#3202, brianc/node-postgres#2439', "{ fill: '#111' }", 'https://github.com/temporalio/sdk-typescript/issues/1587', 'the issue this fixes, in words', 'tissue 4'])('allows %j', (line) => {
    expect(trackerReferences(line)).toEqual([]);
  });

  it('reads prose in a fenced block of Markdown as quoted output', () => {
    expect(referencesIn('notes.md', 'a rule (issue 41)\n```\nrun #1 issue 2\n```\n#3')).toEqual(['notes.md:1: issue 41', 'notes.md:5: #3']);
  });

  it('finds none in src/, test/, bench/, scripts/, docs/, deploy/, .ci/ or the root files', () => {
    const files = scannedFiles();
    expect(files).toEqual(expect.arrayContaining(['README.md', 'src/main.ts', 'docs/api.md', 'bench/run.ts', 'scripts/test.sh']));
    const found = files.flatMap((file) => referencesIn(file, readFileSync(path.join(ROOT, file), 'utf8')));
    expect(found).toEqual([]);
  });
});
