// @ts-check
/**
 * Where a test file's CPU goes. Linux only (/proc); elsewhere every figure is 0.
 * A process tree's CPU is each live process's own time plus the time of the children it has
 * reaped (cutime/cstime), so a process that ran and exited during a file still counts.
 */
const { readdirSync, readFileSync } = require('node:fs');

const TICKS = 100; // USER_HZ: Linux reports these fields in 1/100 s

/** @returns {Map<number, {ppid: number, ticks: number}>} every live process */
function processes() {
  /** @type {Map<number, {ppid: number, ticks: number}>} */
  const all = new Map();
  let entries = [];
  try {
    entries = readdirSync('/proc');
  } catch {
    return all;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the command name (which may hold spaces and parentheses).
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const [utime, stime, cutime, cstime] = [11, 12, 13, 14].map((i) => Number(fields[i]));
      all.set(Number(entry), { ppid: Number(fields[1]), ticks: utime + stime + cutime + cstime });
    } catch {
      // exited meanwhile
    }
  }
  return all;
}

/**
 * CPU seconds of each named process tree, and of `self`'s tree without the named ones.
 * @param {number} self @param {Record<string, number>} roots name → pid
 * @returns {Record<string, number>}
 */
function cpuSeconds(self, roots) {
  const all = processes();
  /** @type {Map<number, number[]>} */
  const children = new Map();
  for (const [pid, { ppid }] of all) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  const named = new Set(Object.values(roots));
  /** @param {number} pid @param {boolean} skipNamed */
  const tree = (pid, skipNamed) => {
    let ticks = all.get(pid)?.ticks ?? 0;
    for (const child of children.get(pid) ?? []) if (!(skipNamed && named.has(child))) ticks += tree(child, skipNamed);
    return ticks;
  };
  /** @type {Record<string, number>} */
  const out = { self: tree(self, true) / TICKS };
  for (const [name, pid] of Object.entries(roots)) out[name] = tree(pid, false) / TICKS;
  return out;
}

/** The run's shared processes (global-setup's SWITCHYARD_TEST_PIDS) as seen from Jest worker `slot`. */
function runRoots(slot) {
  const pids = JSON.parse(process.env.SWITCHYARD_TEST_PIDS ?? '{}');
  /** @type {Record<string, number>} */
  const roots = {};
  if (pids.temporal) roots.temporal = pids.temporal;
  if (pids.postgres) roots.postgres = pids.postgres;
  for (const [name, pid] of Object.entries(pids.workers ?? {})) roots[name === slot ? 'worker' : `worker-${name}`] = Number(pid);
  return roots;
}

module.exports = { cpuSeconds, runRoots };
