import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * docs/security.md renders as the tables it means: every promise's row sits inside its section's
 * table (a row written after the table's closing paragraph renders as text, and a reader scanning the
 * tables misses it), and names the place that holds it and the test that attacks it, both existing.
 */

const ROOT = path.join(__dirname, '..', '..');
const lines = readFileSync(path.join(ROOT, 'docs', 'security.md'), 'utf8').split('\n');
const isRow = (line: string) => line.startsWith('|');

/** The cells of a table row, split on unescaped pipes outside inline code. */
function cells(row: string): string[] {
  const out: string[] = [];
  let cell = '';
  let code = false;
  for (let i = 1; i < row.length; i++) {
    const c = row[i];
    if (c === '`') code = !code;
    if (c === '|' && !code && row[i - 1] !== '\\') {
      out.push(cell.trim());
      cell = '';
    } else cell += c;
  }
  return out;
}

/** The rows of every invariant table: after `| Invariant | Held by | Attacked by |` and its separator, up to the first line that is not a row. */
function invariantRows(): Array<{ line: number; row: string }> {
  const rows: Array<{ line: number; row: string }> = [];
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].startsWith('| Invariant |')) continue;
    for (let j = i + 2; j < lines.length && isRow(lines[j]); j++) rows.push({ line: j + 1, row: lines[j] });
  }
  return rows;
}

describe('docs/security.md', () => {
  it('has no detached table row: every row follows its table header, separator or another row', () => {
    const detached = lines.flatMap((line, i) => {
      if (!isRow(line)) return [];
      const isHeader = /^\|[-:| ]+\|$/.test(lines[i + 1] ?? '');
      const continues = i > 0 && isRow(lines[i - 1]);
      return isHeader || continues ? [] : [`line ${i + 1}: ${line.slice(0, 80)}`];
    });
    expect(detached).toEqual([]);
  });

  it('has an invariant table in each promise section', () => {
    const sections = lines.filter((l) => l.startsWith('## ') && l !== '## Known limits');
    const tables = lines.filter((l) => l.startsWith('| Invariant | Held by | Attacked by |'));
    expect(tables).toHaveLength(sections.length);
  });

  it('names, in every row, the source that holds the promise and the tests that attack it, and each exists', () => {
    const problems: string[] = [];
    for (const { line, row } of invariantRows()) {
      const [promise, heldBy, attackedBy] = cells(row);
      if (!promise || cells(row).length !== 3) problems.push(`line ${line}: not three cells`);
      const sources = [...(heldBy ?? '').matchAll(/`(src\/[^`]+)`/g)].map((m) => m[1]);
      const tests = [...(attackedBy ?? '').matchAll(/`(test\/[^`]+)`/g)].map((m) => m[1]);
      if (sources.length === 0 && heldBy !== 'the rules above') problems.push(`line ${line}: "Held by" names no src/ file`);
      if (tests.length === 0) problems.push(`line ${line}: "Attacked by" names no test/ file`);
      for (const file of [...sources, ...tests]) if (!existsSync(path.join(ROOT, file))) problems.push(`line ${line}: ${file} does not exist`);
    }
    expect(problems).toEqual([]);
  });
});
