import { execFileSync, spawnSync } from 'node:child_process';

/**
 * Prometheus' promtool, from Debian's `prometheus` package: installed here when missing (as root,
 * the way .ci/run installs Chromium), so `npm test` needs no manual step. Resolves its path.
 */
export function ensurePromtool(): string {
  const found = spawnSync('sh', ['-c', 'command -v promtool'], { encoding: 'utf8' });
  if (found.status === 0) return found.stdout.trim();
  if (process.getuid?.() !== 0) throw new Error('promtool is missing and this is not root: apt-get install -y prometheus (Debian) first');
  execFileSync('apt-get', ['update'], { stdio: 'inherit' });
  execFileSync('apt-get', ['install', '-y', '--no-install-recommends', 'prometheus'], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  return spawnSync('sh', ['-c', 'command -v promtool'], { encoding: 'utf8' }).stdout.trim();
}
