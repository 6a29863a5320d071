/**
 * Adds to package-lock.json the platform packages of other machines that npm left out of it.
 *
 * Native packages (@swc/core, unrs-resolver, ...) list one optional dependency per platform. The
 * npm registry reachable here serves only the Linux x64/arm64 ones, so `npm install` writes the
 * others nowhere in the lock, and `npm ci` (the Dockerfile's, or any clean install) then refuses
 * the lock: "Missing: @swc/core-darwin-arm64@ from lock file". This writes each missing one with
 * its version and its os/cpu/libc (read from its name), which is all `npm ci` needs to skip it on
 * another platform (or fetch it by version on its own). Run after `npm install` changes the lock:
 *   npx tsx scripts/complete-lockfile.ts
 * test/integration/image-steps.test.ts runs `npm ci` on a clean copy and fails while one is missing.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

interface LockEntry {
  version?: string;
  dev?: boolean;
  optional?: boolean;
  devOptional?: boolean;
  optionalDependencies?: Record<string, string>;
  os?: string[];
  cpu?: string[];
  libc?: string[];
}

const OSES = ['darwin', 'linux', 'win32', 'android', 'freebsd', 'openharmony', 'sunos', 'netbsd', 'openbsd', 'aix'];

/** `@swc/core-linux-arm-gnueabihf` → os linux, cpu arm, libc glibc. */
export function platformOf(name: string): Pick<LockEntry, 'os' | 'cpu' | 'libc'> | undefined {
  const tokens = name.split('/').pop()!.split('-');
  const at = tokens.findIndex((t) => OSES.includes(t));
  if (at < 0 || at + 1 >= tokens.length) return undefined;
  const libc = tokens.slice(at + 2).join('-');
  return {
    os: [tokens[at]],
    cpu: [tokens[at + 1]],
    ...(tokens[at] === 'linux' && libc.startsWith('gnu') && { libc: ['glibc'] }),
    ...(tokens[at] === 'linux' && libc.startsWith('musl') && { libc: ['musl'] }),
  };
}

function main(): void {
  const file = path.resolve(__dirname, '..', 'package-lock.json');
  const lock = JSON.parse(readFileSync(file, 'utf8')) as { packages: Record<string, LockEntry> };
  const added: string[] = [];
  for (const [key, entry] of Object.entries(lock.packages)) {
    for (const [dependency, version] of Object.entries(entry.optionalDependencies ?? {})) {
      const nested = `${key ? `${key}/` : ''}node_modules/${dependency}`;
      const hoisted = `node_modules/${dependency}`;
      if (lock.packages[nested] || lock.packages[hoisted]) continue;
      const platform = platformOf(dependency);
      if (!platform) throw new Error(`${dependency} (optional dependency of ${key}) is missing from the lock and its name names no platform`);
      lock.packages[hoisted] = { version, ...(entry.dev && { dev: true }), optional: true, ...platform };
      added.push(`${dependency}@${version}`);
    }
  }
  lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
  writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
  console.log(added.length ? `added ${added.length}: ${added.join(', ')}` : 'nothing missing');
}

if (require.main === module) main();
