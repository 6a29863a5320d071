import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { CONFIGURATION_DOC, configurationDoc } from '../../scripts/config-doc';

/** README.md as a landing page and the docs/ pages it leads to stay whole. */
const ROOT = path.join(__dirname, '..', '..');
const PAGES = [
  'README.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];
const read = (page: string) => readFileSync(path.join(ROOT, page), 'utf8');

/** Markdown outside fenced code blocks, inline code removed: where links and headings are real. */
function prose(markdown: string): string[] {
  let fenced = false;
  return markdown.split('\n').filter((line) => {
    if (/^\s*```/.test(line)) fenced = !fenced;
    else return !fenced;
    return false;
  });
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of prose(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*$/.exec(line);
    if (!heading) continue;
    const slug = heading[1]
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count ? `${slug}-${count}` : slug);
  }
  return anchors;
}

function relativeLinks(markdown: string): string[] {
  const text = prose(markdown)
    .join('\n')
    .replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]).filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

describe('README and docs/', () => {
  it('the README is a landing page of at most 200 lines', () => {
    expect(read('README.md').trimEnd().split('\n').length).toBeLessThanOrEqual(200);
  });

  it.each(PAGES)('every relative link and anchor in %s resolves', (page) => {
    const broken: string[] = [];
    for (const link of relativeLinks(read(page))) {
      const [file, anchor] = link.split('#');
      const target = file ? path.join(path.dirname(page), file) : page;
      if (!existsSync(path.join(ROOT, target))) broken.push(`${link}: no file ${target}`);
      else if (anchor !== undefined && target.endsWith('.md') && !anchorsOf(read(target)).has(anchor)) broken.push(`${link}: no heading #${anchor} in ${target}`);
    }
    expect(broken).toEqual([]);
  });

  it('docs/configuration.md is what `npm run docs:config` writes from src/config.ts', () => {
    expect(readFileSync(CONFIGURATION_DOC, 'utf8')).toBe(configurationDoc());
  });

  it('docs/configuration.md names exactly the variables src/config.ts reads', () => {
    const readVariables = new Set<string>();
    const env: NodeJS.ProcessEnv = {};
    const watched = new Proxy(env, {
      get: (_target, name) => {
        if (typeof name === 'string') readVariables.add(name);
        return undefined;
      },
    });
    loadConfig(watched);
    const documented = [...readFileSync(CONFIGURATION_DOC, 'utf8').matchAll(/^\| `([A-Z0-9_]+)` \|/gm)].map((row) => row[1]);
    expect(documented.sort()).toEqual([...readVariables].sort());
  });
});
