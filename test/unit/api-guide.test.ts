import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROUTE_ACCESS } from '../../src/api/access/route-access';
import { INGEST_ROUTES } from '../../src/api/ingest-routes';

/**
 * docs/api.md is a guide by task; /openapi.json and /docs are the field-level reference. The guide
 * names every route (as `METHOD /path`, the route table's own spelling) in the section of the task
 * it serves, so a route added to the API without a place in the guide fails here, named.
 */
const GUIDE = readFileSync(path.resolve(__dirname, '../../docs/api.md'), 'utf8');

/** Every route: the access table's (admin, codec, portal settings) and the ingestion routes. */
const ROUTES = [...Object.keys(ROUTE_ACCESS), ...INGEST_ROUTES.map((route) => `POST ${route.path}`)];

/** Table rows of the guide: cells outside code spans, `|` inside one is not a cell border. */
function tableCells(markdown: string): string[] {
  return markdown
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|[-| :]+\|$/.test(line))
    .flatMap((line) =>
      line
        .replace(/`[^`]*`/g, (code) => code.replace(/\|/g, ' '))
        .replace(/\\\|/g, ' ')
        .split('|')
        .slice(1, -1),
    )
    .map((cell) => cell.trim());
}

describe('docs/api.md, the guide by task', () => {
  it('names every route of the API', () => {
    const missing = ROUTES.filter((route) => !GUIDE.includes(`\`${route}\``));
    if (missing.length > 0) throw new Error(`docs/api.md does not name ${missing.length} route(s); add each, as \`METHOD /path\`, to the operations table of its task:\n${missing.join('\n')}`);
    expect(ROUTES.length).toBeGreaterThan(80);
  });

  // One sentence: no second one begins after a full stop, and at most 300 characters.
  it('keeps every table cell to a sentence', () => {
    const long = tableCells(GUIDE).filter((cell) => /[.!?] [A-Z`]/.test(cell.replace(/`[^`]*`/g, 'x')) || cell.length > 300);
    expect(long).toEqual([]);
  });

  it('links each task to its operations in /docs', () => {
    const sections = GUIDE.split('\n## ').slice(1);
    const withOperations = sections.filter((section) => section.includes('| Operation |'));
    expect(withOperations.length).toBeGreaterThanOrEqual(6);
    for (const section of withOperations) expect(section).toMatch(/\]\(http:\/\/localhost:8080\/docs#\//);
  });
});
