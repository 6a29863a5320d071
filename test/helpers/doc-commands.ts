import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** One shell command a page of the docs shows, with what the page says it answers. */
export interface DocCommand {
  /** `docs/operations.md:271`: where the command starts. */
  where: string;
  /** The command on one line (continuation lines joined), its trailing comment removed. */
  command: string;
  /** The statuses a `# → 201 …` (or `# → 200 … or 409 …`) line right below it promises, if there is one. */
  promisedStatuses?: number[];
}

const FENCE = /^\s*```/;
/** `NAME=value` or `NAME=$(command)` alone on a line: a variable, not a command with its environment. */
const ASSIGNMENT = /^\s*[A-Z_]+=(?:\$\([^)]*\)|\S+)\s*$/;

/** A shell line without its trailing `# …` comment: a `#` after a space, outside quotes. */
function withoutComment(line: string): string {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '#' && /\s/.test(line[i - 1] ?? '')) return line.slice(0, i).trimEnd();
  }
  return line;
}

/**
 * Every `curl` command in the fenced code blocks of `files` (relative to `root`), in file order:
 * lines ending in `\` are joined with the next, a trailing `# …` comment is dropped, and a `# → NNN`
 * comment line just below a command is kept as the status it promises (with any `or NNN` after it),
 * and the variables its block sets before it on lines of their own run first. Inline code (`curl -u …`
 * inside a sentence) is a fragment, not a command, and is not read.
 */
export function docCommands(root: string, files: string[]): DocCommand[] {
  const commands: DocCommand[] = [];
  for (const file of files) {
    const lines = readFileSync(path.join(root, file), 'utf8').split('\n');
    let inFence = false;
    // Variables a block sets on lines of their own (`SINCE=$(date …)`), for its later commands.
    let setup: string[] = [];
    for (let i = 0; i < lines.length; i++) {
      if (FENCE.test(lines[i])) {
        inFence = !inFence;
        setup = [];
        continue;
      }
      if (inFence && ASSIGNMENT.test(lines[i])) setup.push(lines[i].trim());
      if (!inFence || !/^\s*curl\s/.test(lines[i])) continue;
      const start = i;
      let text = lines[i].trim();
      while (text.endsWith('\\') && i + 1 < lines.length) text = `${text.slice(0, -1).trimEnd()} ${lines[++i].trim()}`;
      const command = withoutComment(text);
      const below = lines[i + 1] ?? '';
      const promised = /^\s*#\s*→\s*(\d{3})\b/.exec(below);
      const statuses = promised && [Number(promised[1]), ...[...below.matchAll(/\bor (\d{3})\b/g)].map((m) => Number(m[1]))];
      commands.push({ where: `${file}:${start + 1}`, command: [...setup, command].join('; '), ...(statuses && { promisedStatuses: statuses }) });
    }
  }
  return commands;
}

/** README.md and every page under docs/ (not its subfolders of pictures), the README first. */
export function docPages(root: string): string[] {
  const pages = readdirSync(path.join(root, 'docs')).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/${name}`);
  return ['README.md', ...pages];
}
