import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * The import graph of TypeScript files under a folder, from TypeScript's own scanner and parser:
 * every static `import`/`export … from` and dynamic `import()` of a relative path (packages are
 * leaves, left out). Issue 41: madge did the same in 5–12 s per graph (a full TypeScript-ESTree
 * parse of each file and resolution of every package); this takes a fraction of a second.
 */
export type ModuleGraph = Map<string, string[]>;

export interface GraphOptions {
  /** Leave out `import type` and `export type … from` (they vanish from the compiled code). */
  skipTypeImports: boolean;
}

function resolveRelative(from: string, specifier: string): string | undefined {
  const base = path.resolve(path.dirname(from), specifier);
  return [`${base}.ts`, path.join(base, 'index.ts'), base].find((candidate) => candidate.endsWith('.ts') && existsSync(candidate) && statSync(candidate).isFile());
}

/**
 * The relative specifiers one file imports. With type imports, TypeScript's import scanner
 * (`preProcessFile`) reads only the import and export statements and `import()` calls: a whole
 * parse of src/ cost a second of the unit project (issue 41). It cannot tell `import type` apart,
 * so leaving those out takes the parser.
 */
function importsOf(file: string, options: GraphOptions): string[] {
  const text = readFileSync(file, 'utf8');
  if (!options.skipTypeImports) return ts.preProcessFile(text, true, true).importedFiles.map((imported) => imported.fileName).filter((specifier) => specifier.startsWith('.'));
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found: string[] = [];
  const add = (specifier: ts.Expression | undefined) => {
    if (specifier !== undefined && ts.isStringLiteral(specifier) && specifier.text.startsWith('.')) found.push(specifier.text);
  };
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement)) {
      if (!statement.importClause?.isTypeOnly) add(statement.moduleSpecifier);
    } else if (ts.isExportDeclaration(statement)) {
      if (!statement.isTypeOnly) add(statement.moduleSpecifier);
    }
  }
  if (text.includes('import(')) {
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) add(node.arguments[0]);
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

/** The graph reachable from `entry` (a file), or of every .ts file under `entry` (a folder). Keys and values are absolute paths. */
export function moduleGraph(entry: string, options: GraphOptions): ModuleGraph {
  const graph: ModuleGraph = new Map();
  const pending = statSync(entry).isDirectory() ? tsFilesUnder(entry) : [entry];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (graph.has(file)) continue;
    const targets = importsOf(file, options)
      .map((specifier) => resolveRelative(file, specifier))
      .filter((target): target is string => target !== undefined);
    graph.set(file, targets);
    pending.push(...targets.filter((target) => !graph.has(target)));
  }
  return graph;
}

function tsFilesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts'))
    .map((name) => path.join(dir, name));
}

/** Every cycle's files (strongly connected components of two or more files, or a file importing itself), Tarjan's algorithm. */
export function importCycles(graph: ModuleGraph): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const connect = (file: string): void => {
    index.set(file, next);
    low.set(file, next);
    next++;
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        connect(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file)!, index.get(target)!));
      }
    }
    if (low.get(file) === index.get(file)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== file);
      if (component.length > 1 || (graph.get(file) ?? []).includes(file)) cycles.push(component.sort());
    }
  };
  for (const file of graph.keys()) if (!index.has(file)) connect(file);
  return cycles;
}
