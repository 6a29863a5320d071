import { readFileSync } from 'node:fs';
import path from 'node:path';
import { importCycles, moduleGraph, type ModuleGraph } from '../helpers/module-graph';

/**
 * The floors of src/ (each folder, and each top-level file) import only the floors below them,
 * but for the imports docs/architecture.md names under "Imports that run up a floor", each with
 * the reason it must. Another import running up a floor closes a cycle between floors, which this
 * names; a named import that is gone (folded) must leave the list.
 */
const ROOT = path.resolve(__dirname, '../..');
const SRC = path.join(ROOT, 'src');

/** `delivery` for src/delivery/…, `config` for src/config.ts. */
const floorOf = (file: string) => path.relative(SRC, file).split(path.sep)[0].replace(/\.ts$/, '');

interface NamedImport {
  importers: string[];
  imported: string;
}

/** The rows of the table under "Imports that run up a floor": importing files, the imported file. */
function namedImports(markdown: string): NamedImport[] {
  const section = markdown.split('### Imports that run up a floor')[1]?.split(/\n#{2,3} /)[0] ?? '';
  return section
    .split('\n')
    .filter((line) => line.startsWith('| `src/'))
    .map((line) => {
      const [importers, imported] = line.split(' | ').map((cell) => [...cell.matchAll(/`(src\/[^`]+)`/g)].map((match) => path.join(ROOT, match[1])));
      return { importers, imported: imported[0] };
    });
}

/** The floors' graph, each floor's imports of other floors, less the named imports. */
function floorGraph(graph: ModuleGraph, named: NamedImport[]): ModuleGraph {
  const allowed = new Set(named.flatMap(({ importers, imported }) => importers.map((importer) => `${importer} ${imported}`)));
  const floors: ModuleGraph = new Map();
  for (const [file, targets] of graph) {
    const from = path.join(SRC, floorOf(file));
    const to = targets.filter((target) => floorOf(target) !== floorOf(file) && !allowed.has(`${file} ${target}`)).map((target) => path.join(SRC, floorOf(target)));
    floors.set(from, [...new Set([...(floors.get(from) ?? []), ...to])]);
  }
  return floors;
}

describe('the floors of src/', () => {
  const graph = moduleGraph(SRC);
  const named = namedImports(readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8'));

  it('docs/architecture.md names the imports that run up a floor', () => {
    expect(named.length).toBeGreaterThan(0);
  });

  it('has no import running up a floor but the named ones', () => {
    const allowed = new Set(named.flatMap(({ importers, imported }) => importers.map((importer) => `${importer} ${imported}`)));
    // Each cycle between floors, with the imports that close it (one of them runs up a floor).
    const cycles = importCycles(floorGraph(graph, named)).map((cycle) => {
      const floors = new Set(cycle.map((floor) => path.relative(SRC, floor)));
      const imports = [...graph].flatMap(([file, targets]) =>
        targets
          .filter((target) => floorOf(target) !== floorOf(file) && floors.has(floorOf(file)) && floors.has(floorOf(target)) && !allowed.has(`${file} ${target}`))
          .map((target) => `${path.relative(SRC, file)} → ${path.relative(SRC, target)}`),
      );
      return `${[...floors].join(' ⇄ ')}: ${imports.join(', ')}`;
    });
    expect(cycles).toEqual([]);
  });

  it('names only imports that are still there', () => {
    const gone = named.flatMap(({ importers, imported }) =>
      importers.filter((importer) => !graph.get(importer)?.includes(imported)).map((importer) => `${path.relative(ROOT, importer)} → ${path.relative(ROOT, imported)}`),
    );
    expect(gone).toEqual([]);
  });

  it('finds an import that runs up a floor when it is not named', () => {
    const withUpward: ModuleGraph = new Map([...graph, [path.join(SRC, 'delivery/upward.ts'), [path.join(SRC, 'api/app.ts')]]]);
    expect(importCycles(floorGraph(withUpward, named)).length).toBeGreaterThan(0);
  });
});
