import { existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { transpileSource } from '../../scripts/transpile-source';

/**
 * The processes a test run starts from src/ (workers, APIs, the bench's systems) run as plain
 * JavaScript, transpiled once per run, instead of each through tsx: tsx's loader costs about a
 * CPU-second more per process start (2.7 against 1.7 CPU-s to load the API on this 2-core box), and a
 * run starts about a hundred of them. esbuild transpiles file by file, so the tree keeps src/'s
 * layout one level under the repository, as dist/ does, and every path a module takes from its
 * `__dirname` (the Temporal CLI in .tools, the portal's sources, the sandbox's thread file) holds.
 * It is the same transpile as `npm run build`'s (scripts/transpile-source.js), whose image
 * image-steps proves; `npm start` (through tsx) is quickstart's.
 */
export const COMPILED_SOURCE_ENV = 'SWITCHYARD_COMPILED_SOURCE';

const ROOT = path.resolve(__dirname, '../..');
const PREFIX = '.test-build-';

/** Transpiles src/ (the portal's browser code aside) into a fresh `.test-build-<pid>` under the repository. */
export async function compileSource(pid = process.pid): Promise<string> {
  removeStale();
  const outdir = path.join(ROOT, `${PREFIX}${pid}`);
  await transpileSource(outdir);
  return outdir;
}

export function removeCompiledSource(dir: string | undefined): void {
  if (dir && path.basename(dir).startsWith(PREFIX)) rmSync(dir, { recursive: true, force: true });
}

/** Trees of runs that ended without their teardown (killed): their process is gone. */
function removeStale(): void {
  for (const entry of readdirSync(ROOT)) {
    if (!entry.startsWith(PREFIX)) continue;
    const pid = Number(entry.slice(PREFIX.length));
    if (Number.isInteger(pid) && !alive(pid)) rmSync(path.join(ROOT, entry), { recursive: true, force: true });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Node's arguments to run a TypeScript file of the repository (`src/server.ts`, `bench/floor/floor.ts`):
 * its transpiled twin when the run compiled src/, else the file itself through tsx.
 */
export function nodeArgsFor(file: string): string[] {
  const compiled = process.env[COMPILED_SOURCE_ENV];
  if (compiled && file.startsWith('src/')) {
    const twin = path.join(compiled, file.slice('src/'.length).replace(/\.ts$/, '.js'));
    if (existsSync(twin)) return ['--enable-source-maps', twin];
  }
  return ['--import', 'tsx', path.join(ROOT, file)];
}
